// Where the loop's CPU goes, with and without Mindgate: the 100-step mock loop
// (bench/harness.mjs) run in alternating blocks of the baseline and the instrumented loop
// under V8's sampling profiler (`node:inspector`), each block's CPU time (`process.cpuUsage()`)
// shared out over the code its samples were in: the SDK's own code (`dist/`), Node's
// AsyncLocalStorage promise hooks (`async_hooks`), the `ai` package, zod, the collector, the
// rest. The SDK's own CPU per step, divided by the baseline's CPU per step, is the part of the
// overhead the SDK's code spends itself; the other rows show what it makes others spend.
// `node bench/profile.mjs [blocks] [detached|attached|als]` in sdks/typescript (10 loops a
// block); `als` profiles the baseline inside an AsyncLocalStorage store instead of Mindgate.
// Knobs: BENCH_FUNCTIONS=n lists the n functions whose self time grew most; BENCH_RING=n
// gives the detached session an n-event ring (1: what keeping 2,000 events costs the
// collector); BENCH_FLUSH_MS=n the attached session's flush interval.
import { Session as Inspector } from 'node:inspector/promises';
import { readFileSync } from 'node:fs';
import { Session } from '../dist/index.js';
import { baseline, instrumented, STEPS } from './harness.mjs';
import { missingBinary, startServer } from '../test/support.mjs';

const BLOCKS = Number(process.argv[2] || 40);
const MODE = process.argv[3] || 'detached';
const LOOPS = 10;
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

let srv = null;
let session;
if (MODE === 'attached') {
  const skip = missingBinary();
  if (skip) {
    console.log(`attached ${skip}`);
    process.exit(0);
  }
  srv = await startServer();
  session = new Session({ url: srv.ingest, env: {}, app: 'bench', logger: () => {}, timing: process.env.BENCH_FLUSH_MS ? { flushIntervalMs: Number(process.env.BENCH_FLUSH_MS) } : {} });
  if (!(await session.ready(5000))) throw new Error('the bench session did not attach to mindgate serve');
} else {
  session = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {}, bufferSize: Number(process.env.BENCH_RING || 2000) });
  session.emitTo('run_bench', 'custom', {}); // starts the transport: enabled, never attached
}
let sdk = instrumented(session);
if (MODE === 'als') {
  // Not Mindgate: the baseline inside an AsyncLocalStorage store (Node 20's promise hooks alone).
  const { AsyncLocalStorage } = await import('node:async_hooks');
  const als = new AsyncLocalStorage();
  sdk = async () => {
    try {
      return await als.run({}, baseline);
    } finally {
      als.disable();
    }
  };
}

/** The category of one profile node (by the script it runs in, or V8's pseudo-frames). */
function category(frame) {
  const url = frame.url;
  if (url.includes('/sdks/typescript/dist/')) return 'SDK (dist/)';
  if (url === 'node:async_hooks' || (url === 'node:internal/async_hooks' && frame.functionName.startsWith('promise'))) return 'async_hooks (AsyncLocalStorage)';
  if (url.includes('/node_modules/ai/') || url.includes('/node_modules/@ai-sdk/')) return 'ai';
  if (url.includes('/node_modules/zod/')) return 'zod';
  if (url.includes('/node_modules/ws/')) return 'ws';
  if (frame.functionName === '(garbage collector)') return 'collector';
  if (frame.functionName === '(idle)') return 'idle';
  return 'other (Node, builtins, bench)';
}

const inspector = new Inspector();
inspector.connect();
await inspector.post('Profiler.enable');
const totals = [new Map(), new Map()]; // category → CPU ms, baseline / instrumented
const functions = [new Map(), new Map()]; // function → CPU ms, baseline / instrumented
const cpu = [0, 0];

/** One block of `LOOPS` loops under the profiler; its CPU shared out by sample counts. */
async function block(fn, side) {
  await inspector.post('Profiler.start');
  const c0 = process.cpuUsage();
  for (let i = 0; i < LOOPS; i++) await fn();
  const c = process.cpuUsage(c0);
  const { profile } = await inspector.post('Profiler.stop');
  const ms = (c.user + c.system) / 1000;
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const counts = new Map();
  const fns = new Map();
  let busy = 0;
  for (const id of profile.samples) {
    const frame = byId.get(id);
    const cat = category(frame);
    if (cat === 'idle') continue;
    counts.set(cat, (counts.get(cat) ?? 0) + 1);
    const name = `${cat}: ${frame.functionName || '(anonymous)'} (${frame.url.split('/').pop()}:${frame.lineNumber + 1})`;
    fns.set(name, (fns.get(name) ?? 0) + 1);
    busy += 1;
  }
  cpu[side] += ms;
  for (const [cat, n] of counts) totals[side].set(cat, (totals[side].get(cat) ?? 0) + (ms * n) / busy);
  for (const [name, n] of fns) functions[side].set(name, (functions[side].get(name) ?? 0) + (ms * n) / busy);
}

for (let i = 0; i < 30; i++) {
  await baseline();
  await sdk();
}
const before = loadavg();
for (let b = 0; b < BLOCKS; b++) {
  if (b % 2 === 0) {
    await block(baseline, 0);
    await block(sdk, 1);
  } else {
    await block(sdk, 1);
    await block(baseline, 0);
  }
}
const steps = BLOCKS * LOOPS * STEPS;
const perStep = (ms) => (ms * 1000) / steps;
const baseStep = perStep(cpu[0]);
console.log(`${MODE}, node ${process.version}, ${BLOCKS} blocks of ${LOOPS} loops per side; load average ${before} → ${loadavg()}`);
console.log(`CPU per step: baseline ${baseStep.toFixed(1)} µs, with Mindgate ${perStep(cpu[1]).toFixed(1)} µs (${(((cpu[1] / cpu[0]) - 1) * 100).toFixed(1)} %)`);
console.log('µs per step by where the samples were   baseline   with Mindgate   difference (% of the baseline step)');
const cats = [...new Set([...totals[0].keys(), ...totals[1].keys()])].sort((a, b) => (totals[1].get(b) ?? 0) - (totals[1].get(a) ?? 0));
for (const cat of cats) {
  const a = perStep(totals[0].get(cat) ?? 0);
  const w = perStep(totals[1].get(cat) ?? 0);
  console.log(`  ${cat.padEnd(36)} ${a.toFixed(1).padStart(8)} ${w.toFixed(1).padStart(14)} ${(w - a).toFixed(1).padStart(12)} (${(((w - a) / baseStep) * 100).toFixed(1)} %)`);
}
const own = perStep(totals[1].get('SDK (dist/)') ?? 0);
console.log(`the SDK's own code: ${own.toFixed(1)} µs per step = ${((own / baseStep) * 100).toFixed(1)} % of the baseline step`);
if (process.env.BENCH_FUNCTIONS) {
  // BENCH_FUNCTIONS=n: the n functions whose self time grew most with Mindgate.
  console.log('functions by the self time Mindgate adds, µs per step (with Mindgate − baseline):');
  const names = new Set([...functions[0].keys(), ...functions[1].keys()]);
  const diffs = [...names].map((name) => [name, perStep((functions[1].get(name) ?? 0) - (functions[0].get(name) ?? 0))]);
  for (const [name, d] of diffs.sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_FUNCTIONS) || 15)) console.log(`  ${d.toFixed(2).padStart(6)}  ${name}`);
}
await session.dispose(0);
await srv?.stop();
