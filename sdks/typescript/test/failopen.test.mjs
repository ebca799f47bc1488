// Harmless by construction: a server killed mid-hold releases the gate within 100 ms and the
// agent finishes; a reconnect replays the ring buffer with the original seqs and the server
// ends up with every event exactly once; disabled, no socket is ever opened.
import assert from 'node:assert/strict';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, test } from 'node:test';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { emit, run, Session, tool as mgTool } from '../dist/index.js';
import { mindgateMiddleware, mindgateTools } from '../dist/ai.js';
import { scriptedModel, toolCall } from './fixture.mjs';
import { events, freePort, missingBinary, nextPause, startServer, until } from './support.mjs';

const skip = missingBinary() || false;
if (skip) console.log(skip);
const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

test('the server killed mid-hold: the gate is released within 100 ms and the agent finishes', { skip }, async () => {
  const srv = await startServer();
  cleanups.push(() => srv.stop());
  await srv.api('/api/breakpoints', { method: 'POST', body: { kind: 'tool', name: 'get_weather' } });
  const s = new Session({ url: srv.ingest, app: 'ts-failopen' });
  cleanups.push(() => s.dispose(0));
  assert.equal(await s.ready(5000), true);
  let releasedAt = null;
  const { model } = scriptedModel([() => toolCall('get_weather', { city: 'Oslo' })]);
  const tools = mindgateTools({
    get_weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => { releasedAt = performance.now(); return { sky: 'clear' }; } }),
  }, { session: s });
  const done = run('killed', (ctx) => generateText({
    model: wrapLanguageModel({ model, middleware: mindgateMiddleware({ session: s }) }),
    tools, prompt: 'weather?', stopWhen: stepCountIs(4), abortSignal: ctx.signal,
  }), { session: s });
  await nextPause(srv);
  assert.equal(s.stats().heldGates, 1);
  assert.equal(releasedAt, null, 'held');
  const killedAt = performance.now();
  await srv.kill();
  const goneAt = performance.now();
  await until(() => releasedAt !== null, { timeout: 2000, interval: 1, what: 'the gate to be released' });
  // From the moment the server process is seen gone (its socket closed with it).
  const latency = Math.max(0, releasedAt - goneAt);
  console.log(`released ${(releasedAt - killedAt).toFixed(2)} ms after SIGKILL was sent, ${latency.toFixed(2)} ms after the process was gone`);
  assert.ok(latency < 100, `released ${latency} ms after the server was gone`);
  const result = await done;
  assert.match(result.text, /clear/, 'the agent finished with the real tool result');
  assert.equal(s.stats().heldGates, 0);
  assert.equal(s.attached, false);
});

test('a reconnect replays the ring buffer with the original seqs: every event stored exactly once', { skip }, async () => {
  let srv = await startServer();
  const { port, home } = srv;
  cleanups.push(() => srv.stop());
  const s = new Session({ url: srv.ingest, app: 'ts-replay', timing: { retryMinMs: 20, retryMaxMs: 100 } });
  cleanups.push(() => s.dispose(0));
  assert.equal(await s.ready(5000), true);
  const note = mgTool('note', async (i) => ({ noted: i }), { session: s });
  let runId;
  let release;
  const gate = new Promise((r) => (release = r));
  const done = run('replayed', async (ctx) => {
    runId = ctx.runId;
    for (let i = 0; i < 5; i++) await note(i);
    await gate; // the server restarts here
    for (let i = 5; i < 10; i++) await note(i);
  }, { session: s });
  await until(async () => (await events(srv, runId).catch(() => [])).length >= 12, { what: 'the first events stored' });
  await srv.stop({ keepHome: true });
  await until(() => !s.attached, { timeout: 5000, what: 'the session to notice' });
  release();
  await done; // finished while detached: the rest lives only in the ring buffer
  const expected = s.stats().seq; // seqs 0..seq-1; seq 0 and each hello are not run events
  srv = await startServer({ port, home });
  await until(() => s.attached, { timeout: 10000, what: 'the reconnect' });
  const stored = await until(async () => {
    const evs = await events(srv, runId).catch(() => []);
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { what: 'the replayed run.finished' });
  const seqs = stored.map((e) => e.seq);
  assert.equal(new Set(seqs).size, seqs.length, 'no duplicates');
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  assert.equal(seqs[seqs.length - 1] - seqs[0] + 1, seqs.length, 'contiguous original seqs: nothing lost, nothing renumbered');
  // 2 run starts + 10 tools × 2 + agent finish + run.finished
  assert.equal(stored.length, 24);
  assert.equal(stored.filter((e) => e.type === 'node.finished' && e.payload.nodeId === 'tool:note').length, 10);
  assert.ok(Math.max(...seqs) < expected);
  assert.equal((await srv.api('/api/runs?limit=10')).runs.find((r) => r.id === runId).status, 'ok');
});

test('disabled: identity wrappers, no socket opened (a counting server sees none), nothing buffered', async () => {
  let connections = 0;
  const counter = net.createServer((sock) => {
    connections += 1;
    sock.destroy();
  });
  await new Promise((r) => counter.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => counter.close(r)));
  const url = `ws://127.0.0.1:${counter.address().port}/ingest`;
  // Proof the counter counts: an enabled session dials it.
  const probe = new Session({ url, env: {} });
  probe.ready(200);
  await until(() => connections > 0, { what: 'the enabled probe to dial the counting server' });
  await probe.dispose(0);
  connections = 0;

  for (const env of [{ GRAPHMIND_DISABLED: '1' }, { MINDGATE_DISABLED: '1' }, { NODE_ENV: 'production' }]) {
    const s = new Session({ url, env });
    assert.equal(s.enabled, false, JSON.stringify(env));
    const tools = { t: tool({ inputSchema: z.object({}), execute: async () => 'x' }) };
    assert.equal(mindgateTools(tools, { session: s }), tools, 'tools returned as they were');
    const fn = async (x) => x;
    assert.equal(mgTool('t', fn, { session: s }), fn, 'tool() is the identity');
    const middleware = mindgateMiddleware({ session: s });
    assert.equal(middleware.wrapGenerate, undefined);
    assert.equal(middleware.wrapStream, undefined);
    const { model } = scriptedModel([() => toolCall('t', {})]);
    const out = await run('off', async (ctx) => {
      assert.ok(ctx.signal instanceof AbortSignal, 'a working context');
      return generateText({ model: wrapLanguageModel({ model, middleware }), tools, prompt: 'x', stopWhen: stepCountIs(3), abortSignal: ctx.signal });
    }, { session: s });
    assert.equal(out.steps.length, 2);
    assert.equal(await s.ready(50), false);
    s.emit('node.started', { nodeId: 'x', kind: 'custom', name: 'x', instanceId: 'x' });
    assert.deepEqual({ ...s.stats() }, { enabled: false, attached: false, buffered: 0, dropped: 0, unsentDropped: 0, socketBuffered: 0, heldGates: 0, seq: 0, connectAttempts: 0 });
    await s.dispose();
  }
  const off = new Session({ env: { GRAPHMIND_DISABLED: '1' }, enabled: true });
  assert.equal(off.enabled, false, 'the kill switch beats code');
  assert.equal(new Session({ env: { NODE_ENV: 'production', GRAPHMIND: '1' } }).enabled, true, 'GRAPHMIND=1 forces it on in production');
  emit('custom', {}); // the process session is untouched by these tests, and never throws
  assert.equal(connections, 0, 'no socket was opened while disabled');
});

test('an internal error is a no-op with one rate-limited warning, never thrown into the host', () => {
  const warnings = [];
  const s = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: (m) => warnings.push(m) });
  const hostile = { get input() { throw new Error('a getter that throws'); } };
  for (let i = 0; i < 5; i++) s.emit('node.started', hostile);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0], /^\[mindgate\] internal error/);
  // Buffered: only the implicit run's run.started; the broken events took no seq.
  assert.deepEqual([s.stats().buffered, s.stats().seq], [1, 1], 'the broken event is dropped, nothing else');
  s.emit('node.token', { nodeId: 'x', deltas: [] });
  assert.deepEqual([s.stats().buffered, s.stats().seq], [2, 2], 'later events still flow');
  return s.dispose(0);
});

test('detached: gates pass, events go only to the ring buffer (drop-oldest), errors of the host propagate untouched', async () => {
  const s = new Session({ url: 'ws://127.0.0.1:9/ingest', bufferSize: 5, env: {}, logger: () => {} });
  const boom = new TypeError('the host failed');
  const failing = mgTool('failing', async () => { throw boom; }, { session: s });
  await assert.rejects(run('host-error', () => failing(), { session: s }), (e) => e === boom);
  for (let i = 0; i < 10; i++) s.emit('node.token', { nodeId: 'x', deltas: [{ t: 'text', v: String(i) }] });
  const stats = s.stats();
  assert.equal(stats.buffered, 5);
  assert.ok(stats.dropped > 0);
  assert.equal(stats.heldGates, 0);
  await s.dispose(0);
});

test('the host\'s values are shown as they were when emitted, though the host changes them afterwards (detached, then replayed)', { skip }, async () => {
  const port = await freePort();
  const s = new Session({ url: `ws://127.0.0.1:${port}/ingest`, app: 'ts-snapshot', timing: { retryMinMs: 20, retryMaxMs: 100 } });
  cleanups.push(() => s.dispose(0));
  const given = [];
  const returned = [];
  const { model } = scriptedModel([() => toolCall('lookup', { city: 'Oslo' }, 'call_lookup_1')]);
  const tools = mindgateTools({
    lookup: tool({ inputSchema: z.object({ city: z.string() }), execute: async (input) => { given.push(input); const out = { sky: 'clear', temps: [1, 2] }; returned.push(out); return out; } }),
  }, { session: s });
  let runId;
  await run('snapshots', (ctx) => {
    runId = ctx.runId;
    return generateText({
      model: wrapLanguageModel({ model, middleware: mindgateMiddleware({ session: s }) }),
      tools, prompt: 'weather?', stopWhen: stepCountIs(3), abortSignal: ctx.signal,
    });
  }, { session: s });
  // The host changes what it handed over and what it returned, after the events were emitted.
  given[0].city = 'CHANGED';
  returned[0].sky = 'CHANGED';
  returned[0].temps.push(99);
  const srv = await startServer({ port });
  cleanups.push(() => srv.stop());
  await until(() => s.attached, { timeout: 10000, what: 'the session to attach' });
  const stored = await until(async () => {
    const evs = await events(srv, runId).catch(() => []);
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { what: 'the replayed run' });
  const toolStarted = stored.find((e) => e.type === 'node.started' && e.payload.nodeId === 'tool:lookup');
  assert.deepEqual(toolStarted.payload.input, { city: 'Oslo' });
  const toolFinished = stored.find((e) => e.type === 'node.finished' && e.payload.nodeId === 'tool:lookup');
  assert.deepEqual(toolFinished.payload.output, { sky: 'clear', temps: [1, 2] });
  const steps = stored.filter((e) => e.type === 'node.started' && e.payload.nodeId === 'llm:step');
  assert.equal(steps.length, 2);
  assert.deepEqual(steps[0].payload.input.prompt, [{ role: 'user', content: [{ type: 'text', text: 'weather?' }] }]);
  // The second step's new messages: the model's tool call and the tool's result, as they were then.
  const [call, result] = steps[1].payload.input.messages;
  assert.equal(steps[1].payload.input.previousMessages, 1);
  assert.equal(call.role, 'assistant');
  assert.deepEqual(call.content.map((p) => [p.type, p.toolCallId, p.input]), [['tool-call', 'call_lookup_1', { city: 'Oslo' }]]);
  assert.equal(result.role, 'tool');
  assert.deepEqual(result.content[0].output, { type: 'json', value: { sky: 'clear', temps: [1, 2] } });
});

test('a host value over the payload budget is kept as a preview when emitted, with one warning; a cyclic one does not throw', async () => {
  const warnings = [];
  const s = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: (m) => warnings.push(m) });
  const big = mgTool('big', async () => ({ text: 'x'.repeat(600 * 1024) }), { session: s });
  const cyclic = mgTool('cyclic', async (x) => { x.self = x; return x; }, { session: s });
  await run('budget', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await big()).text.length, 600 * 1024, 'the host gets its value whole');
    const value = await cyclic({ a: 1 });
    assert.equal(value.self, value);
  }, { session: s });
  assert.equal(warnings.filter((m) => m.includes('over the 512 KB budget')).length, 1, warnings.join('\n'));
  await s.dispose(0);
});

test('a host value whose toJSON throws is shown as a marker with one warning; the host gets its value and the run goes on', async () => {
  const warnings = [];
  const s = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: (m) => warnings.push(m) });
  const hostile = { toJSON() { throw new Error('no JSON for you'); } };
  const echo = mgTool('hostile', async (x) => x, { session: s });
  await run('hostile', async () => {
    for (let i = 0; i < 3; i++) assert.equal(await echo(hostile), hostile, 'the host gets its own value back');
  }, { session: s });
  const marked = warnings.filter((m) => m.includes('could not be serialised (no JSON for you)'));
  assert.equal(marked.length, 1, warnings.join('\n'));
  await s.dispose(0);
});
