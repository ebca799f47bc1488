// The overhead Mindgate adds to a 100-step mock `generateText` tool loop, measured as paired
// ratios so that the load of a shared machine cancels:
//   - each pair runs the baseline and one instrumented variant back to back, in alternating
//     order (baseline first in even pairs, second in odd ones), each on a collected heap;
//   - each run is timed in CPU time of the process (`process.cpuUsage()`, user + system), not
//     wall time, so time the machine spends on other processes is not counted;
//   - the figure is the median of the per-pair ratios (variant / baseline − 1) with their
//     interquartile range, so a pair disturbed by the collector or the JIT moves the spread,
//     not the median.
// `node --expose-gc bench/loop.mjs [pairs]` in sdks/typescript (default 41 pairs per variant);
// the attached variant needs the mindgate binary (MINDGATE_BIN) and is skipped without it.
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { run, Session } from '../dist/index.js';
import { mindgateMiddleware, mindgateTools } from '../dist/ai.js';
import { missingBinary, startServer } from '../test/support.mjs';

const STEPS = 100;
const WARMUP = Number(process.env.BENCH_WARMUP || 25);

function loopModel() {
  let n = 0;
  const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } };
  return new MockLanguageModelV3({
    doGenerate: async () => {
      n += 1;
      if (n % STEPS === 0) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop' }, usage, warnings: [] };
      return { content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: `{"q":"${n}"}` }], finishReason: { unified: 'tool-calls' }, usage, warnings: [] };
    },
  });
}

const searchTool = () => ({ search: tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => ({ hits: [q] }) }) });

/** The loop without Mindgate; it passes an abortSignal as the instrumented loop does (`ctx.signal`). */
const baseline = () => generateText({ model: loopModel(), tools: searchTool(), prompt: 'go', stopWhen: stepCountIs(STEPS), abortSignal: new AbortController().signal });

const instrumented = (session) => () =>
  run('bench-loop', (ctx) => generateText({
    model: wrapLanguageModel({ model: loopModel(), middleware: mindgateMiddleware({ session }) }),
    tools: mindgateTools(searchTool(), { session }),
    prompt: 'go', stopWhen: stepCountIs(STEPS), abortSignal: ctx.signal,
  }), { session });

/**
 * CPU ms of one run, the full collection of its own garbage included: each run starts on a
 * collected heap and pays for what it allocated, never for another run's garbage.
 */
async function cpuMs(fn) {
  const c0 = process.cpuUsage();
  await fn();
  globalThis.gc?.();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

const quantile = (sorted, q) => {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (i - lo);
};

/** Median and interquartile range of the paired ratios, plus the medians of each side. */
async function paired(variant, pairs) {
  for (let i = 0; i < WARMUP; i++) { await cpuMs(baseline); await cpuMs(variant); } // the JIT settles after ~20 runs
  const ratios = [];
  const base = [];
  const inst = [];
  for (let p = 0; p < pairs; p++) {
    let b;
    let v;
    if (p % 2 === 0) { b = await cpuMs(baseline); v = await cpuMs(variant); } else { v = await cpuMs(variant); b = await cpuMs(baseline); }
    base.push(b);
    inst.push(v);
    ratios.push(v / b - 1);
  }
  const sort = (xs) => [...xs].sort((x, y) => x - y);
  const r = sort(ratios);
  const b = sort(base);
  const v = sort(inst);
  // The least disturbed runs of each side: on a loaded machine a run is only ever slowed down.
  const low = quantile(v, 0.1) / quantile(b, 0.1) - 1;
  return { median: quantile(r, 0.5), q1: quantile(r, 0.25), q3: quantile(r, 0.75), base: quantile(b, 0.5), inst: quantile(v, 0.5), low };
}

const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
function report(name, s) {
  console.log(`${name.padEnd(34)} baseline ${s.base.toFixed(1).padStart(6)} ms (${((s.base * 1000) / STEPS).toFixed(0)} µs/step)  with ${s.inst.toFixed(1).padStart(6)} ms  overhead median ${pct(s.median)}  IQR ${pct(s.q1)} … ${pct(s.q3)}  lower deciles ${pct(s.low)}`);
}

const pairs = Number(process.argv[2] || 41);
if (process.env.BENCH_DECOMPOSE) {
  // Where an overhead comes from: the `ai` package's own model wrapper with a middleware that
  // does nothing, and the loop run inside an AsyncLocalStorage store.
  const { AsyncLocalStorage } = await import('node:async_hooks');
  const als = new AsyncLocalStorage();
  const wrappedOnly = () => generateText({ model: wrapLanguageModel({ model: loopModel(), middleware: { specificationVersion: 'v3' } }), tools: searchTool(), prompt: 'go', stopWhen: stepCountIs(STEPS), abortSignal: new AbortController().signal });
  report('wrapLanguageModel, empty middleware', await paired(wrappedOnly, pairs));
  report('inside AsyncLocalStorage.run', await paired(() => als.run({}, baseline), pairs));
}
const detached = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {} });
detached.emitTo('run_bench', 'custom', {}); // starts the transport: enabled, never attached
report('detached', await paired(instrumented(detached), pairs));
const skip = missingBinary();
if (skip) {
  console.log(`attached ${skip}`);
} else {
  const srv = await startServer();
  try {
    const attached = new Session({ url: srv.ingest, env: {}, app: 'bench', logger: () => {} });
    await attached.ready(5000);
    report('attached to mindgate serve', await paired(instrumented(attached), pairs));
    await attached.dispose(0);
  } finally {
    await srv.stop();
  }
}
await detached.dispose(0);
