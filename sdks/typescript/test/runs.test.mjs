// Runs by AsyncLocalStorage against the real server: concurrent runs stay apart however their
// awaits interleave; events outside any run land in one implicit run; a span's nodes are its
// children; a tool's instances are one per call under one stable node id.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { run, Session, span, tool } from '../dist/index.js';
import { events, missingBinary, startServer, until } from './support.mjs';

const skip = missingBinary() || false;
if (skip) console.log(skip);
let srv;
let s;
before(async () => {
  if (skip) return;
  srv = await startServer();
  s = new Session({ url: srv.ingest, app: 'ts-runs' });
  assert.equal(await s.ready(5000), true);
});
after(async () => {
  await s?.dispose(200);
  await srv?.stop();
});

const tick = () => new Promise((r) => setImmediate(r));
const finished = (runId) => until(async () => {
  const evs = await events(srv, runId);
  return evs.some((e) => e.type === 'run.finished') && evs;
}, { what: `run.finished of ${runId}` });

test('two concurrent runs keep their own events; a tool has one node and one instance per call', { skip }, async () => {
  const search = tool('search', async (q) => {
    await tick();
    return { q };
  }, { session: s });
  const agent = (name) => run(name, async (ctx) => {
    for (let i = 0; i < 3; i++) {
      await search(`${name}-${i}`);
      await tick();
    }
    return ctx.runId;
  }, { session: s });
  const [a, b] = await Promise.all([agent('left'), agent('right')]);
  for (const [runId, name] of [[a, 'left'], [b, 'right']]) {
    const evs = await finished(runId);
    const starts = evs.filter((e) => e.type === 'node.started' && e.payload.nodeId === 'tool:search');
    assert.equal(starts.length, 3);
    assert.deepEqual(starts.map((e) => e.payload.input), [0, 1, 2].map((i) => `${name}-${i}`));
    assert.equal(new Set(starts.map((e) => e.payload.instanceId)).size, 3, 'one instance per call');
    assert.ok(starts.every((e) => e.payload.parentId === `agent:${name}`));
  }
});

test('a span parents the nodes inside it; events outside any run go to one implicit run', { skip }, async () => {
  const lookup = tool('lookup', async () => 'found', { session: s });
  const runId = await run('nested', async (ctx) => {
    await span('plan', async () => lookup(), { session: s, kind: 'chain' });
    return ctx.runId;
  }, { session: s });
  const evs = await finished(runId);
  const started = Object.fromEntries(evs.filter((e) => e.type === 'node.started').map((e) => [e.payload.nodeId, e.payload]));
  assert.equal(started['chain:plan'].parentId, 'agent:nested');
  assert.equal(started['tool:lookup'].parentId, 'chain:plan');

  s.emit('graph.hint', { nodes: [{ nodeId: 'custom:stray', kind: 'custom', name: 'stray' }] });
  await lookup();
  const implicit = await until(async () => (await srv.api('/api/runs?limit=20')).runs.find((r) => r.meta?.implicit === true), { what: 'the implicit run' });
  const stray = await until(async () => {
    const list = await events(srv, implicit.id);
    return list.some((e) => e.type === 'node.finished' && e.payload.nodeId === 'tool:lookup') && list;
  }, { what: 'the stray tool call in the implicit run' });
  assert.ok(stray.some((e) => e.type === 'graph.hint'));
  assert.equal(implicit.name, 'implicit');
});

test('a server started with --allow-remote takes the app only with its token (sent as a bearer header)', { skip }, async () => {
  const remote = await startServer({ extraArgs: ['--allow-remote'] });
  const sessions = [];
  try {
    const without = new Session({ url: remote.ingest, app: 'ts-remote', logger: () => {} });
    sessions.push(without);
    assert.equal(await without.ready(1500), false, 'refused without the token');
    const withToken = new Session({ url: remote.ingest, app: 'ts-remote', token: remote.token });
    sessions.push(withToken);
    assert.equal(await withToken.ready(5000), true, 'attached with the token');
    const runId = await run('remote', async (ctx) => ctx.runId, { session: withToken });
    await until(async () => (await remote.api('/api/runs?limit=5')).runs.find((r) => r.id === runId)?.status === 'ok', { what: 'the run stored' });
  } finally {
    for (const x of sessions) await x.dispose(0);
    await remote.stop();
  }
});
