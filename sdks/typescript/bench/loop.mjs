// The overhead Mindgate adds to a 100-step mock `generateText` tool loop (bench/harness.mjs),
// detached and attached to `mindgate serve`, measured so that a few per cent can be resolved
// on a loaded machine:
//   - rounds: each round runs the baseline and every instrumented variant once, in an order
//     that rotates from round to round, so slow drifts of the machine's load and any order
//     effect fall on every variant alike;
//   - each run is timed in CPU time of the process (`process.cpuUsage()`, user + system), not
//     wall time, so time the machine spends on other processes is not counted;
//   - no forced collection: each run's garbage is collected as it allocates, mostly within
//     the run (a loop allocates many young generations' worth); what spills into the next run
//     spills into every variant alike thanks to the rotation;
//   - the SDK's AsyncLocalStorage promise hooks are switched off after each instrumented run
//     (harness.mjs), so the baseline never pays for them;
//   - many rounds (default 600): single runs differ by ±20–40 % here, so the figure is the
//     ratio of the variant's total CPU to the baseline's over all rounds, with a 95 %
//     bootstrap interval (resampling rounds), next to the median and interquartile range of
//     the per-round ratios;
//   - a reference variant runs the baseline inside an AsyncLocalStorage store and nothing
//     else: what Node 20's promise hooks cost this loop, which any AsyncLocalStorage in the
//     process (OpenTelemetry, Next.js, Mindgate's runs) turns on. Each instrumented variant is
//     also compared with it: the part of the overhead beyond those hooks.
// `node bench/loop.mjs [rounds]` in sdks/typescript; the attached variant needs the mindgate
// binary (MINDGATE_BIN) and is skipped without it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { Session } from '../dist/index.js';
import { baseline, cpuMs, instrumented, quantile, sdkAt, STEPS, wrappedOnly } from './harness.mjs';
import { missingBinary, startServer } from '../test/support.mjs';

const ROUNDS = Number(process.argv[2] || 600);
const WARMUP = Number(process.env.BENCH_WARMUP || 30);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const als = new AsyncLocalStorage();
const inStore = (loop) => async () => {
  try {
    return await als.run({}, loop);
  } finally {
    als.disable(); // as the instrumented loops do: the hooks on only while it runs
  }
};
const variants = [
  { name: 'baseline', fn: baseline },
  { name: 'baseline inside AsyncLocalStorage.run (no Mindgate)', fn: inStore(baseline) },
];
// BENCH_DECOMPOSE=1: also the `ai` package's own `wrapLanguageModel` layer (a middleware that
// does nothing) inside the store, so the overhead splits into Node's hooks, that layer, the SDK.
if (process.env.BENCH_DECOMPOSE) variants.push({ name: 'wrapLanguageModel, empty middleware, in AsyncLocalStorage.run (no Mindgate)', fn: inStore(wrappedOnly) });
const detached = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {} });
detached.emitTo('run_bench', 'custom', {}); // starts the transport: enabled, never attached
variants.push({ name: 'detached', fn: instrumented(detached) });
// BENCH_BEFORE=<dist dir>: also another build of the SDK, detached, in the same rounds (before / after).
let before = null;
if (process.env.BENCH_BEFORE) {
  const sdk = await sdkAt(process.env.BENCH_BEFORE);
  before = new sdk.Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {} });
  before.emitTo('run_bench', 'custom', {});
  variants.push({ name: `detached, the SDK at ${process.env.BENCH_BEFORE}`, fn: instrumented(before, sdk) });
}
let srv = null;
let attached = null;
const skip = missingBinary();
if (skip) {
  console.log(`attached ${skip}`);
} else {
  srv = await startServer();
  attached = new Session({ url: srv.ingest, env: {}, app: 'bench', logger: () => {} });
  if (!(await attached.ready(5000))) throw new Error('the bench session did not attach to mindgate serve');
  variants.push({ name: 'attached to mindgate serve', fn: instrumented(attached) });
}

console.log(`node ${process.version}, ${ROUNDS} rounds after ${WARMUP} warm-up rounds; load average before: ${loadavg()}`);
const times = variants.map(() => []);
for (let r = -WARMUP; r < ROUNDS; r++) {
  for (let k = 0; k < variants.length; k++) {
    const i = (k + r + WARMUP) % variants.length;
    const ms = await cpuMs(variants[i].fn);
    if (r >= 0) times[i].push(ms);
  }
}
const load = loadavg();

/** A deterministic generator for the bootstrap (xorshift32). */
function rng(seed) {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** Total-CPU ratio of `v` to `b` over rounds, with a 95 % bootstrap interval over rounds. */
function totalRatio(v, b) {
  const sum = (xs) => xs.reduce((a, x) => a + x, 0);
  const point = sum(v) / sum(b) - 1;
  const next = rng(0x9e3779b9);
  const boots = [];
  for (let k = 0; k < 2000; k++) {
    let sv = 0;
    let sb = 0;
    for (let j = 0; j < v.length; j++) {
      const i = Math.floor(next() * v.length);
      sv += v[i];
      sb += b[i];
    }
    boots.push(sv / sb - 1);
  }
  boots.sort((x, y) => x - y);
  return { point, lo: quantile(boots, 0.025), hi: quantile(boots, 0.975) };
}

const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
const signed = (x, digits) => `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;
const sorted = (xs) => [...xs].sort((x, y) => x - y);
const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length;
const base = times[0];
console.log(`baseline: mean ${mean(base).toFixed(1)} ms CPU per loop (${((mean(base) * 1000) / STEPS).toFixed(0)} µs/step), median ${quantile(sorted(base), 0.5).toFixed(1)} ms`);
const store = times[1];
for (let i = 1; i < variants.length; i++) {
  const v = times[i];
  const t = totalRatio(v, base);
  const ratios = sorted(v.map((x, j) => x / base[j] - 1));
  const addedMs = mean(v) - mean(base);
  console.log(
    `${variants[i].name}: ${signed(addedMs, 2)} ms per loop (${signed((addedMs * 1000) / STEPS, 1)} µs/step), ` +
      `total CPU ${pct(t.point)} (95 % interval ${pct(t.lo)} … ${pct(t.hi)}); ` +
      `per-round ratios median ${pct(quantile(ratios, 0.5))}, IQR ${pct(quantile(ratios, 0.25))} … ${pct(quantile(ratios, 0.75))}`,
  );
  if (i < 2) continue;
  const references = [['the AsyncLocalStorage hooks', store]];
  const wrapped = variants.findIndex((x) => x.name.startsWith('wrapLanguageModel'));
  if (wrapped > 0 && i > wrapped) references.push(['the hooks and the ai package\'s wrapLanguageModel layer', times[wrapped]]);
  for (const [what, ref] of references) {
    const beyond = totalRatio(v, ref);
    const beyondMs = mean(v) - mean(ref);
    console.log(
      `  beyond ${what}: ${signed(beyondMs, 2)} ms per loop (${signed((beyondMs * 1000) / STEPS, 1)} µs/step), ` +
        `${pct(beyond.point)} of that loop (95 % interval ${pct(beyond.lo)} … ${pct(beyond.hi)}), ` +
        `${pct(beyondMs / mean(base))} of the baseline`,
    );
  }
}
console.log(`load average after: ${load}`);
await attached?.dispose(0);
await detached.dispose(0);
await before?.dispose(0);
await srv?.stop();
