// The SDK's own CPU cost of one step of a tool loop, without the `ai` package around it: the
// middleware's `wrapGenerate` around a model answer that is already there, then the wrapped
// tool's `execute`, inside one `run` (steps per run as in the 100-step loop). Far steadier
// than the whole loop on a loaded machine: this is the part of the loop's overhead the SDK's
// code itself spends (node events, gates, serialisation of the host's values, ids), next to
// the baseline's per-step cost that bench/loop.mjs prints.
// `node --expose-gc bench/step.mjs [steps]` in sdks/typescript.
import { run, Session } from '../dist/index.js';
import { mindgateMiddleware, mindgateTools } from '../dist/ai.js';

const STEPS_PER_RUN = 100;
const session = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {} });
session.emitTo('run_bench', 'custom', {}); // starts the transport: enabled, never attached
const middleware = mindgateMiddleware({ session });
const tools = mindgateTools({ search: { description: 'search', inputSchema: {}, execute: async ({ q }) => ({ hits: [q] }) } }, { session });
const model = { specificationVersion: 'v3', provider: 'mock', modelId: 'mock-model' };
const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } };

/** One run of `STEPS_PER_RUN` steps; the prompt grows by two messages per step as in `generateText`. */
async function oneRun() {
  await run('bench-step', async () => {
    const prompt = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
    for (let n = 1; n <= STEPS_PER_RUN; n++) {
      const answer = { content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: `{"q":"${n}"}` }], finishReason: { unified: 'tool-calls' }, usage, warnings: [] };
      const params = { prompt, tools: [{ type: 'function', name: 'search', inputSchema: {} }] };
      await middleware.wrapGenerate({ doGenerate: async () => answer, doStream: async () => answer, params, model });
      const output = await tools.search.execute({ q: String(n) }, { toolCallId: `c${n}`, messages: prompt });
      prompt.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: { q: String(n) } }] });
      prompt.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${n}`, toolName: 'search', output: { type: 'json', value: output } }] });
    }
  }, { session });
}

/** The same steps without the SDK: the model answer and the tool's `execute` awaited directly. */
async function bareRun() {
  const prompt = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
  const execute = async ({ q }) => ({ hits: [q] });
  for (let n = 1; n <= STEPS_PER_RUN; n++) {
    const answer = { content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: `{"q":"${n}"}` }], finishReason: { unified: 'tool-calls' }, usage, warnings: [] };
    await (async () => answer)();
    const output = await execute({ q: String(n) });
    prompt.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: { q: String(n) } }] });
    prompt.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${n}`, toolName: 'search', output: { type: 'json', value: output } }] });
  }
}

/**
 * Median CPU µs per step over `runs` runs. No forced collection: the variants run in separate
 * blocks, so each pays the collector for its own garbage, as a host would.
 */
async function perStep(fn, runs) {
  for (let i = 0; i < 50; i++) await fn();
  const xs = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    await fn();
    const c = process.cpuUsage(c0);
    xs.push((c.user + c.system) / STEPS_PER_RUN);
  }
  xs.sort((a, b) => a - b);
  return { median: xs[Math.floor(xs.length / 2)], q1: xs[Math.floor(xs.length / 4)], q3: xs[Math.floor((3 * xs.length) / 4)] };
}

const runs = Number(process.argv[2] || 101);
const bare = await perStep(bareRun, runs);
const sdk = await perStep(oneRun, runs);
const fmt = (s) => `${s.median.toFixed(1)} µs CPU (IQR ${s.q1.toFixed(1)} … ${s.q3.toFixed(1)})`;
console.log(`per step without the SDK: ${fmt(bare)}`);
console.log(`per step with the SDK, detached: ${fmt(sdk)}  → the SDK's own cost ${(sdk.median - bare.median).toFixed(1)} µs/step`);
await session.dispose(0);
