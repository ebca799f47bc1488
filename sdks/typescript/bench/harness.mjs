// The 100-step mock `generateText` tool loop every loop benchmark runs, with and without
// Mindgate: the real `ai` package and its mock model (`ai/test`), one zod-typed tool, the
// model calling it on 99 steps and answering on the 100th. The mock answers on the next turn
// of the event loop (`setImmediate`), as a provider's answer arrives from a socket: without
// it a whole loop runs in one turn of microtasks, an attached session gets no turn to send
// its events until the loop has ended, and a bench chaining loops never sends them (the ring
// buffer drops them) — the sending would not be measured. The two loops differ only by
// Mindgate: the instrumented one wraps the model with `mindgateMiddleware`, the tools with
// `mindgateTools` and runs inside `run`, and both pass an `abortSignal`.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { run } from '../dist/index.js';
import { mindgateMiddleware, mindgateTools } from '../dist/ai.js';
import { scopes } from '../dist/context.js';

export const STEPS = 100;

function loopModel() {
  let n = 0;
  const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } };
  return new MockLanguageModelV3({
    doGenerate: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      n += 1;
      if (n % STEPS === 0) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop' }, usage, warnings: [] };
      return { content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: `{"q":"${n}"}` }], finishReason: { unified: 'tool-calls' }, usage, warnings: [] };
    },
  });
}

const searchTool = () => ({ search: tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => ({ hits: [q] }) }) });

/** The loop without Mindgate; it passes an abortSignal as the instrumented loop does (`ctx.signal`). */
export const baseline = () =>
  generateText({ model: loopModel(), tools: searchTool(), prompt: 'go', stopWhen: stepCountIs(STEPS), abortSignal: new AbortController().signal });

/** Not Mindgate: the baseline with the model behind `wrapLanguageModel` and a middleware that does nothing (the `ai` package's own layer). */
export const wrappedOnly = () =>
  generateText({
    model: wrapLanguageModel({ model: loopModel(), middleware: { specificationVersion: 'v3' } }),
    tools: searchTool(), prompt: 'go', stopWhen: stepCountIs(STEPS), abortSignal: new AbortController().signal,
  });

/**
 * The same loop with Mindgate on `session`. Afterwards the SDK's AsyncLocalStorage is
 * disabled again, so the promise hooks it turns on (Node 20) are paid by the instrumented
 * loops only, never by a baseline run after them; the next `run` turns them on again.
 * `sdk`: another build of the SDK (`{run, mindgateMiddleware, mindgateTools, scopes}` from its
 * `dist/`), for a before / after comparison in one process.
 */
export const instrumented = (session, sdk = { run, mindgateMiddleware, mindgateTools, scopes }) => async () => {
  try {
    return await sdk.run('bench-loop', (ctx) => generateText({
      model: wrapLanguageModel({ model: loopModel(), middleware: sdk.mindgateMiddleware({ session }) }),
      tools: sdk.mindgateTools(searchTool(), { session }),
      prompt: 'go', stopWhen: stepCountIs(STEPS), abortSignal: ctx.signal,
    }), { session });
  } finally {
    sdk.scopes.disable();
  }
};

/** The `dist/` directory `dir` of another build of the SDK, as `instrumented` takes it, and its `Session`. */
export async function sdkAt(dir) {
  const base = pathToFileURL(path.resolve(dir) + '/').href;
  const index = await import(new URL('index.js', base).href);
  const ai = await import(new URL('ai.js', base).href);
  const context = await import(new URL('context.js', base).href);
  return { run: index.run, Session: index.Session, mindgateMiddleware: ai.mindgateMiddleware, mindgateTools: ai.mindgateTools, scopes: context.scopes };
}

/** CPU ms (user + system of the process) of one awaited call. */
export async function cpuMs(fn) {
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

/** The `q` quantile of an ascending array, interpolated. */
export const quantile = (sorted, q) => {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (i - lo);
};
