// Bytes allocated per step of the 100-step mock loop (bench/harness.mjs), by variant, counted
// by V8's sampling heap profiler (`node:inspector`, every object sampled whether the collector
// has taken it since or not). Unlike CPU time on a shared machine this is steady to about
// ±1 % of the loop's allocation, and it drives the collector's share of the loop's CPU
// (about a quarter of the baseline's, `bench/profile.mjs`): a young generation filled faster
// is scavenged more often, and each scavenge copies the `ai` package's live objects. The
// variants build up from the baseline: Node 20's AsyncLocalStorage promise hooks alone (the
// baseline inside a store), the `ai` package's `wrapLanguageModel` layer with an empty
// middleware on top of them (what any run-keeping adapter built on the documented middleware
// costs before it records anything), then Mindgate detached; the SDK's own allocation is
// listed by function (where the allocating frame is in `dist/`).
// `node bench/alloc.mjs [passes]` in sdks/typescript; BENCH_BEFORE=<dist dir> adds another
// build of the SDK, detached, to every pass.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Session as Inspector } from 'node:inspector/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session } from '../dist/index.js';
import { baseline, instrumented, sdkAt, STEPS, wrappedOnly } from './harness.mjs';

const PASSES = Number(process.argv[2] || 2);
const LOOPS = 20;
const WARMUP = 10;
/** Bytes between samples: small against the loop's ~250 KB a step, so the totals are exact to well under 1 %. */
const INTERVAL = 512;

const als = new AsyncLocalStorage();
const inStore = (loop) => async () => {
  try {
    return await als.run({}, loop);
  } finally {
    als.disable();
  }
};
const detachedSession = (S) => {
  const s = new S({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {} });
  s.emitTo('run_bench', 'custom', {}); // starts the transport: enabled, never attached
  return s;
};
/** The `dist/` directories of the SDK builds measured (profile frames carry `file://` URLs). */
const sdkDirs = [new URL('../dist/', import.meta.url).href];
const own = detachedSession(Session);
const variants = [
  { name: 'baseline', fn: baseline },
  { name: "Node 20's AsyncLocalStorage hooks (the baseline inside a store)", fn: inStore(baseline) },
  { name: "+ the ai package's wrapLanguageModel layer, empty middleware", fn: inStore(wrappedOnly) },
  { name: 'Mindgate, detached', fn: instrumented(own), sdk: true },
];
let other = null;
if (process.env.BENCH_BEFORE) {
  const sdk = await sdkAt(process.env.BENCH_BEFORE);
  sdkDirs.push(pathToFileURL(path.resolve(process.env.BENCH_BEFORE) + '/').href);
  other = detachedSession(sdk.Session);
  variants.push({ name: `Mindgate, detached, the SDK at ${process.env.BENCH_BEFORE}`, fn: instrumented(other, sdk), sdk: true });
}

const inspector = new Inspector();
inspector.connect();
await inspector.post('HeapProfiler.enable');

/** One variant's bytes per step, and the SDK's own bytes per step by function. */
async function measure(fn) {
  for (let i = 0; i < WARMUP; i++) await fn();
  await inspector.post('HeapProfiler.startSampling', { samplingInterval: INTERVAL, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let i = 0; i < LOOPS; i++) await fn();
  const { profile } = await inspector.post('HeapProfiler.stopSampling');
  let total = 0;
  const sdk = new Map();
  const walk = (node) => {
    total += node.selfSize;
    const frame = node.callFrame;
    if (node.selfSize > 0 && sdkDirs.some((dir) => frame.url.startsWith(dir))) {
      const name = `${frame.functionName || '(anonymous)'} (${frame.url.split('/').pop()}:${frame.lineNumber + 1})`;
      sdk.set(name, (sdk.get(name) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const steps = LOOPS * STEPS;
  return { perStep: total / steps, sdk: new Map([...sdk].map(([k, v]) => [k, v / steps])) };
}

console.log(`node ${process.version}, ${PASSES} passes of ${LOOPS} loops a variant (after ${WARMUP} to warm up), a sample every ${INTERVAL} bytes`);
const results = variants.map(() => []);
for (let p = 0; p < PASSES; p++) {
  for (let i = 0; i < variants.length; i++) results[i].push(await measure(variants[i].fn));
}
const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length;
const base = mean(results[0].map((r) => r.perStep));
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
const signed = (b) => `${b >= 0 ? '+' : '−'}${kb(Math.abs(b))}`;
let previous = base;
for (let i = 0; i < variants.length; i++) {
  const xs = results[i].map((r) => r.perStep);
  const m = mean(xs);
  const step = i === 0 || variants[i].sdk ? '' : `, ${signed(m - previous)} on the row above`;
  console.log(
    `${variants[i].name}: ${kb(m)} a step (passes ${xs.map(kb).join(', ')}), ${signed(m - base)} = ${(((m - base) / base) * 100).toFixed(1)} % against the baseline${step}`,
  );
  if (!variants[i].sdk) previous = m;
}
const floor = mean(results[2].map((r) => r.perStep));
for (let i = 3; i < variants.length; i++) {
  const m = mean(results[i].map((r) => r.perStep));
  console.log(`${variants[i].name} beyond the hooks and the layer: ${signed(m - floor)} a step = ${(((m - floor) / base) * 100).toFixed(1)} % of the baseline's allocation`);
  const byFn = new Map();
  for (const r of results[i]) for (const [k, v] of r.sdk) byFn.set(k, (byFn.get(k) ?? 0) + v / PASSES);
  const ownTotal = [...byFn.values()].reduce((a, x) => a + x, 0);
  console.log(`  allocated in the SDK's own functions: ${ownTotal.toFixed(0)} B a step`);
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_FUNCTIONS || 8))) console.log(`    ${v.toFixed(0).padStart(6)} B  ${k}`);
}
await own.dispose(0);
await other?.dispose(0);
