// The four actions against the real `mindgate serve` and the real `ai` package's mock model:
// breakpoints and the mode are set through the viewer's HTTP API before the app attaches (so
// its hello.ack carries them), gates are released through the same API.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { run, Session } from '../dist/index.js';
import { mindgateMiddleware, mindgateTools } from '../dist/ai.js';
import { answer, scriptedModel, toolCall, toolResults } from './fixture.mjs';
import { events, missingBinary, nextPause, resume, runRow, startServer, until } from './support.mjs';

const skip = missingBinary() || false;
if (skip) console.log(skip);

let srv;
let s;
before(async () => {
  if (!skip) srv = await startServer();
});
after(async () => srv?.stop());
afterEach(async () => {
  await s?.dispose(200);
  s = null;
  if (!srv) return;
  const { breakpoints } = await srv.api('/api/debug');
  for (const matcher of breakpoints) await srv.api('/api/breakpoints', { method: 'DELETE', body: matcher });
  await srv.api('/api/mode', { method: 'PUT', body: { mode: 'run' } });
});

/** A session attached to the test server (armed with whatever was set before). */
async function attach() {
  s = new Session({ url: srv.ingest, app: 'ts-gates' });
  assert.equal(await s.ready(5000), true, 'the session attaches');
  return s;
}

async function breakpoint(matcher) {
  await srv.api('/api/breakpoints', { method: 'POST', body: matcher });
}

function weatherTool(execute) {
  return tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute });
}

function agent(session, model, tools, name, options = {}) {
  let runId;
  const done = run(name, async (ctx) => {
    runId = ctx.runId;
    return generateText({
      model: wrapLanguageModel({ model, middleware: mindgateMiddleware({ session }) }),
      tools: mindgateTools(tools, { session }),
      prompt: 'What is the weather in Oslo?',
      stopWhen: stepCountIs(5),
      abortSignal: ctx.signal,
      ...options,
    });
  }, { session });
  // Settled at once, so an abort's rejection is never unhandled while the test resumes.
  const outcome = done.then((value) => ({ value }), (error) => ({ error }));
  const finished = async () => {
    const o = await outcome;
    if ('error' in o) throw o.error;
    return o.value;
  };
  return { done: finished, outcome, runId: () => runId };
}

test('a tool held by a breakpoint and injected: the model sees the injected value, execute never runs', { skip }, async () => {
  await breakpoint({ kind: 'tool', name: 'get_weather' });
  const session = await attach();
  let executed = 0;
  const { model, calls } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  const a = agent(session, model, { get_weather: weatherTool(async () => { executed += 1; return { sky: 'real' }; }) }, 'inject');
  const pause = await nextPause(srv);
  assert.equal(pause.nodeId, 'tool:get_weather');
  assert.equal(pause.point, 'before');
  assert.equal(await resume(srv, pause, { action: 'inject', output: { sky: 'injected by the viewer' } }), 'resumed');
  const result = await a.done();
  assert.equal(executed, 0, 'execute did not run');
  assert.equal(calls.length, 2);
  assert.deepEqual(toolResults(calls[1]), [{ toolName: 'get_weather', type: 'json', value: { sky: 'injected by the viewer' } }]);
  assert.match(result.text, /injected by the viewer/);
  await until(async () => (await runRow(srv, a.runId()))?.status === 'ok', { what: 'the run to finish ok' });
  const stored = await events(srv, a.runId());
  const finished = stored.filter((e) => e.type === 'node.finished' && e.payload.nodeId === 'tool:get_weather');
  assert.equal(finished.length, 1);
  assert.equal(finished[0].payload.injected, true);
  // The first step carries the whole prompt; the next one only the messages added since.
  const steps = stored.filter((e) => e.type === 'node.started' && e.payload.nodeId === 'llm:step').map((e) => e.payload);
  assert.equal(steps[0].input.prompt.length, 1);
  assert.equal(steps[1].input.previousMessages, 1);
  assert.deepEqual(steps[1].input.messages.map((m) => m.role), ['assistant', 'tool']);
  assert.equal(steps[1].model, 'mock-model');
  // A step's output shows its tool calls with the arguments parsed (done when the event is sent).
  const stepEnd = stored.find((e) => e.type === 'node.finished' && e.payload.nodeId === 'llm:step').payload;
  assert.deepEqual(stepEnd.output.toolCalls.map((c) => [c.toolName, c.input]), [['get_weather', { city: 'Oslo' }]]);
  assert.equal(stepEnd.finishReason, 'tool-calls');
});

test('retry at the error gate re-runs a failing tool; the model sees its second result', { skip }, async () => {
  await breakpoint({ kind: 'tool', point: 'error' });
  const session = await attach();
  let attempts = 0;
  const flaky = weatherTool(async () => {
    attempts += 1;
    if (attempts === 1) throw new Error('weather service timed out');
    return { sky: 'clear', attempt: attempts };
  });
  const { model, calls } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  const a = agent(session, model, { get_weather: flaky }, 'retry');
  const pause = await nextPause(srv);
  assert.equal(pause.point, 'error');
  assert.equal(attempts, 1);
  assert.equal(await resume(srv, pause, { action: 'retry' }), 'resumed');
  await a.done();
  assert.equal(attempts, 2, 'the tool ran again');
  assert.deepEqual(toolResults(calls[1])[0].value, { sky: 'clear', attempt: 2 });
  const stored = await until(async () => {
    const evs = await events(srv, a.runId());
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { what: 'run.finished' });
  const errors = stored.filter((e) => e.type === 'node.error' && e.payload.nodeId === 'tool:get_weather');
  assert.equal(errors.length, 1);
  const resumed = stored.find((e) => e.type === 'exec.resumed');
  assert.equal(resumed.payload.action, 'retry');
});

test('abort ends generateText with an AbortError, the run is aborted, and nothing is retried', { skip }, async () => {
  await breakpoint({ kind: 'llm' });
  const session = await attach();
  const { model, calls } = scriptedModel([() => answer('never')]);
  const a = agent(session, model, {}, 'abort', { maxRetries: 3 });
  const pause = await nextPause(srv);
  assert.equal(pause.nodeId, 'llm:step');
  assert.equal(await resume(srv, pause, { action: 'abort' }), 'resumed');
  const { error } = await a.outcome;
  assert.equal(error?.name, 'AbortError', 'generateText ended with an abort error');
  assert.equal(calls.length, 0, 'the provider was never called (no retry)');
  await until(async () => (await runRow(srv, a.runId()))?.status === 'aborted', { what: 'the run to be aborted' });
  const paused = (await events(srv, a.runId())).filter((e) => e.type === 'exec.paused');
  assert.equal(paused.length, 1, 'held once: the abort was not retried into another hold');
});

test('abort at a tool: generateText rejects with the abort before another model step', { skip }, async () => {
  await breakpoint({ kind: 'tool' });
  const session = await attach();
  const { model, calls } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  const a = agent(session, model, { get_weather: weatherTool(async () => ({ sky: 'real' })) }, 'abort-tool');
  const pause = await nextPause(srv);
  assert.equal(await resume(srv, pause, { action: 'abort' }), 'resumed');
  const { error } = await a.outcome;
  assert.equal(error?.name, 'AbortError', 'generateText ended with an abort error');
  assert.equal(calls.length, 1, 'no model step after the abort');
  await until(async () => (await runRow(srv, a.runId()))?.status === 'aborted', { what: 'the run to be aborted' });
});

test('step mode holds every model step (and every tool) before it runs', { skip }, async () => {
  await srv.api('/api/mode', { method: 'PUT', body: { mode: 'step' } });
  const session = await attach();
  const { model, calls } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' }), () => toolCall('get_weather', { city: 'Bergen' })]);
  const a = agent(session, model, { get_weather: weatherTool(async ({ city }) => ({ city, sky: 'clear' })) }, 'step');
  const held = [];
  let finished = false;
  a.outcome.then(() => (finished = true));
  while (!finished && held.length < 10) {
    const pause = await until(async () => finished || (await srv.api('/api/pauses')).pauses[0], { what: 'the next step hold' });
    if (pause === true) break;
    held.push(`${pause.nodeId}@${pause.point}`);
    const stepsSoFar = held.filter((h) => h.startsWith('llm:step')).length;
    if (pause.nodeId === 'llm:step') assert.equal(calls.length, stepsSoFar - 1, 'the step is held before the provider is called');
    assert.equal(await resume(srv, pause, { action: 'continue' }), 'resumed');
  }
  await a.done();
  assert.deepEqual(held, ['llm:step@before', 'tool:get_weather@before', 'llm:step@before', 'tool:get_weather@before', 'llm:step@before']);
  assert.equal(calls.length, 3);
});

test('streamText: a held stream step, then its deltas arrive as node.token with usage and finish reason', { skip }, async () => {
  await breakpoint({ kind: 'llm' });
  const session = await attach();
  const { model, calls } = scriptedModel([() => answer('clear skies over Oslo today')]);
  let runId;
  const done = run('stream', async (ctx) => {
    runId = ctx.runId;
    const result = streamText({ model: wrapLanguageModel({ model, middleware: mindgateMiddleware({ session }) }), prompt: 'weather?', abortSignal: ctx.signal });
    return result.text;
  }, { session });
  const pause = await nextPause(srv);
  assert.equal(calls.length, 0, 'held before the provider is called');
  await resume(srv, pause, { action: 'continue' });
  assert.equal(await done, 'clear skies over Oslo today');
  const stored = await until(async () => {
    const evs = await events(srv, runId);
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { what: 'run.finished' });
  const text = stored.filter((e) => e.type === 'node.token').flatMap((e) => e.payload.deltas).filter((d) => d.t === 'text').map((d) => d.v).join('');
  assert.equal(text, 'clear skies over Oslo today');
  const step = stored.find((e) => e.type === 'node.finished' && e.payload.nodeId === 'llm:step');
  assert.deepEqual(step.payload.usage, { inputTokens: 20, outputTokens: 9 });
  assert.equal(step.payload.finishReason, 'stop');
  assert.equal(step.payload.output.text, 'clear skies over Oslo today');
});

test('the first model step announces the tool roster with graph.hint', { skip }, async () => {
  const session = await attach();
  const { model } = scriptedModel([() => answer('no tools needed')]);
  const lookup = tool({ description: 'x', inputSchema: z.object({}), execute: async () => 1 });
  const a = agent(session, model, { get_weather: weatherTool(async () => 1), lookup }, 'hint');
  await a.done();
  const stored = await until(async () => {
    const evs = await events(srv, a.runId());
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { what: 'run.finished' });
  const hints = stored.filter((e) => e.type === 'graph.hint');
  assert.equal(hints.length, 1);
  assert.deepEqual(hints[0].payload.nodes.map((n) => n.nodeId), ['llm:step', 'tool:get_weather', 'tool:lookup']);
  const firstStep = stored.findIndex((e) => e.type === 'node.started' && e.payload.nodeId === 'llm:step');
  assert.ok(stored.indexOf(hints[0]) < firstStep, 'announced before the first step starts');
});

test('continue with an edited input runs the tool with it (edit-input)', { skip }, async () => {
  await breakpoint({ kind: 'tool', name: 'get_weather' });
  const session = await attach();
  const seen = [];
  const { model } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  const a = agent(session, model, { get_weather: weatherTool(async (input) => { seen.push(input); return { sky: 'clear' }; }) }, 'edit');
  const pause = await nextPause(srv);
  assert.equal(pause.editable, true);
  assert.equal(await resume(srv, pause, { action: 'continue', input: ['not', 'an', 'object'] }), 'refused');
  const again = await nextPause(srv, 'the gate still held after the refused edit');
  assert.equal(again.pauseId, pause.pauseId);
  assert.equal(await resume(srv, pause, { action: 'continue', input: { city: 'Tromsø' } }), 'resumed');
  await a.done();
  assert.deepEqual(seen, [{ city: 'Tromsø' }]);
});

test('breakpoints and the mode changed while attached reach the app live, and a disconnect forgets them', { skip }, async () => {
  const session = await attach();
  await breakpoint({ kind: 'tool', name: 'get_weather' });
  await srv.api('/api/mode', { method: 'PUT', body: { mode: 'step' } });
  await until(() => session.armed().mode === 'step' && session.armed().breakpoints.some((m) => m.name === 'get_weather'), { what: 'breakpoint.set and mode.set to arrive' });
  await srv.api('/api/breakpoints', { method: 'DELETE', body: { kind: 'tool', name: 'get_weather' } });
  await until(() => !session.armed().breakpoints.some((m) => m.name === 'get_weather'), { what: 'breakpoint.clear to arrive' });
  await srv.api('/api/breakpoints', { method: 'POST', body: { kind: 'tool', name: 'get_weather' } });
  await until(() => session.armed().breakpoints.some((m) => m.name === 'get_weather'), { what: 'the breakpoint again' });
  const { model } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  await srv.api('/api/mode', { method: 'PUT', body: { mode: 'run' } });
  await until(() => session.armed().mode === 'run', { what: 'mode run' });
  const a = agent(session, model, { get_weather: weatherTool(async () => ({ sky: 'clear' })) }, 'live-breakpoint');
  const pause = await nextPause(srv);
  assert.equal(pause.nodeId, 'tool:get_weather');
  await resume(srv, pause, { action: 'continue' });
  await a.done();
  await session.dispose(0);
  assert.deepEqual(session.armed(), { breakpoints: [], mode: 'run' }, 'forgotten once detached');
});

test('the host aborting its run releases a held gate with abort; generateText ends with the abort', { skip, timeout: 20000 }, async () => {
  await breakpoint({ kind: 'tool', name: 'get_weather' });
  const session = await attach();
  let executed = 0;
  let runCtx;
  const { model } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  const done = run('host-abort', (ctx) => {
    runCtx = ctx;
    return generateText({
      model: wrapLanguageModel({ model, middleware: mindgateMiddleware({ session }) }),
      tools: mindgateTools({ get_weather: weatherTool(async () => { executed += 1; return 1; }) }, { session }),
      prompt: 'x', stopWhen: stepCountIs(4), abortSignal: ctx.signal,
    });
  }, { session }).then(() => null, (error) => error);
  const pause = await nextPause(srv);
  runCtx.abort();
  const error = await done;
  assert.equal(error?.name, 'AbortError');
  assert.equal(executed, 0);
  assert.equal(session.stats().heldGates, 0);
  const stored = await until(async () => {
    const evs = await events(srv, runCtx.runId);
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { what: 'run.finished' });
  const resumed = stored.find((e) => e.type === 'exec.resumed' && e.payload.pauseId === pause.pauseId);
  assert.equal(resumed.payload.action, 'abort');
  assert.deepEqual(resumed.payload.principal, { kind: 'fail-open' });
  assert.equal(stored.find((e) => e.type === 'run.finished').payload.status, 'aborted');
});

test('streamText in a multi-step tool loop: the tool held and injected, its arguments streamed as tool-args', { skip, timeout: 20000 }, async () => {
  await breakpoint({ kind: 'tool', name: 'get_weather' });
  const session = await attach();
  const { model, calls } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  let runId;
  const done = run('stream-loop', async (ctx) => {
    runId = ctx.runId;
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: mindgateMiddleware({ session }) }),
      tools: mindgateTools({ get_weather: weatherTool(async () => ({ sky: 'real' })) }, { session }),
      prompt: 'weather?', stopWhen: stepCountIs(3), abortSignal: ctx.signal,
    });
    return result.text;
  }, { session }).then((text) => ({ text }), (error) => ({ error }));
  const pause = await nextPause(srv);
  assert.equal(pause.nodeId, 'tool:get_weather');
  await resume(srv, pause, { action: 'inject', output: { sky: 'injected' } });
  const { text, error } = await done;
  assert.equal(error, undefined);
  assert.match(text, /injected/);
  assert.deepEqual(toolResults(calls[1])[0].value, { sky: 'injected' });
  const stored = await until(async () => {
    const evs = await events(srv, runId);
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { what: 'run.finished' });
  const args = stored.filter((e) => e.type === 'node.token').flatMap((e) => e.payload.deltas).filter((d) => d.t === 'tool-args').map((d) => d.v).join('');
  assert.deepEqual(JSON.parse(args), { city: 'Oslo' });
  assert.equal(stored.filter((e) => e.type === 'node.finished' && e.payload.nodeId === 'llm:step').length, 2);
});
