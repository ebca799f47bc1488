// An offline trip-planning agent: the `ai` package's mock model drives a multi-step tool loop
// with two tools, one of which fails once. Reads the viewer URL from GRAPHMIND_URL (or
// MINDGATE_URL; default ws://127.0.0.1:4747/ingest) and exits 0 when done.
//
//   node examples/agent.mjs            (with `mindgate serve` running, watch it in the viewer)
//
// With a viewer page open, the failing tool holds at its error gate: press Retry (or
// Continue: the model then sees the error and calls the tool again).
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import * as mg from 'mindgate';
import { mindgateMiddleware, mindgateTools } from 'mindgate/ai';

const usage = (input, output) => ({ inputTokens: { total: input }, outputTokens: { total: output } });
const call = (toolName, input) => ({
  content: [{ type: 'tool-call', toolCallId: `call_${toolName}_${Math.random().toString(36).slice(2, 8)}`, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(180, 24),
  warnings: [],
});

/** The last tool result the model was sent: `{toolName, failed}`, or null. */
function lastResult(prompt) {
  const parts = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content).filter((p) => p.type === 'tool-result');
  const last = parts[parts.length - 1];
  return last ? { toolName: last.toolName, failed: last.output?.type?.startsWith('error') } : null;
}

// A scripted model: weather first, then a table; a failed booking is tried again.
const model = new MockLanguageModelV3({
  modelId: 'mock-trip-planner',
  doGenerate: async ({ prompt }) => {
    const last = lastResult(prompt);
    if (last === null) return call('get_weather', { city: 'Lisbon' });
    if (last.toolName === 'get_weather' || last.failed) return call('book_table', { restaurant: 'Taberna', time: '20:00' });
    return {
      content: [{ type: 'text', text: 'Lisbon is sunny at 24 °C; your table at Taberna is booked for 20:00.' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: usage(260, 31),
      warnings: [],
    };
  },
});

let bookingAttempts = 0;
const tools = mindgateTools({
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, sky: 'sunny', celsius: 24 }),
  }),
  book_table: tool({
    description: 'Books a restaurant table',
    inputSchema: z.object({ restaurant: z.string(), time: z.string() }),
    execute: async ({ restaurant, time }) => {
      bookingAttempts += 1;
      if (bookingAttempts === 1) throw new Error('booking service timed out');
      return { restaurant, time, confirmation: 'TB-2041' };
    },
  }),
});

mg.configure({ app: 'trip-planner-ts' });
const attached = await mg.ready(); // false without a viewer: the agent runs detached
console.log(attached ? `attached to ${mg.session().url}` : 'no viewer: running detached');

const result = await mg.run('plan-trip', (run) =>
  generateText({
    model: wrapLanguageModel({ model, middleware: mindgateMiddleware() }),
    tools,
    prompt: 'Plan my evening in Lisbon: check the weather and book a table.',
    stopWhen: stepCountIs(6),
    abortSignal: run.signal,
  }),
);
console.log(`done: ${result.text} (${result.steps.length} steps, ${bookingAttempts} booking attempts)`);
await mg.dispose();
