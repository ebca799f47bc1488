// graphdelta.js under Node, without a browser: a server snapshot in parts and
// the deltas after it become the RunGraph the graph view draws (the messages
// are the shapes docs/ui-feed.md § Projection mode gives; the server side is
// crates/server/tests/live_graph.rs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunGraph } from '../../ui/dist/js/rungraph.js';
import { applySnapshot, applyDelta, applyNodeDetail } from '../../ui/dist/js/graphdelta.js';

const inst = (instanceId, status, extra = {}) => ({
  instanceId, status, startedAt: 1000, finishedAt: status === 'running' ? null : 1010, durationMs: null, heldMs: null,
  usage: null, tokens: '', error: null, firstSeq: 1, ...extra,
});
const node = (nodeId, parentId, status, instances = []) => ({
  nodeId, kind: nodeId.split(':')[0], name: nodeId.split(':')[1], parentId, status, hinted: false, instances,
});

test('a snapshot in parts: a child whose parent comes in a later part waits for it', () => {
  const m = new RunGraph('r');
  const done1 = applySnapshot(m, {
    type: 'graph.snapshot', runId: 'r', seq: 7, more: true,
    nodes: [node('agent:a', null, 'running', [inst('a#0', 'running')]), node('tool:c', 'chain:p', 'ok', [inst('c#0', 'ok', { usage: { inputTokens: 3, outputTokens: 2 } })])],
  });
  assert.equal(done1, false, 'more parts follow');
  assert.equal(m.nodes.get('tool:c').parent, null, 'its parent is not known yet');
  const done2 = applySnapshot(m, {
    type: 'graph.snapshot', runId: 'r', seq: 7, more: false,
    nodes: [node('chain:p', 'agent:a', 'pending')],
  });
  assert.equal(done2, true);
  const [a, c, p] = ['agent:a', 'tool:c', 'chain:p'].map((id) => m.nodes.get(id));
  assert.deepEqual(m.order.map((n) => n.id), ['agent:a', 'tool:c', 'chain:p'], 'graph order');
  assert.equal(c.parent, p);
  assert.equal(p.parent, a);
  assert.deepEqual([a.depth, p.depth, c.depth], [0, 1, 2]);
  assert.equal(a.desc, 2);
  assert.deepEqual(m.roots, [a]);
  assert.equal(p.placeholder, true, 'a pending parent is drawn as waiting for its start');
  assert.equal(c.insts[0].status, 'ok');
  // The run's token total is the core's (the run summary's `usage`): the model sums none.
  assert.deepEqual(m.usage(), {}, 'no run summary yet: no token total derived from the instances');
  m.summary = { usage: { inputTokens: 7, outputTokens: 1 } };
  assert.deepEqual(m.usage(), { inputTokens: 7, outputTokens: 1 }, 'the run summary\'s usage');
  assert.equal(m.lastSeq, 7);
});

test('deltas replace node summaries and instances, add new ones, and stale ones change nothing', () => {
  const m = new RunGraph('r');
  applySnapshot(m, { type: 'graph.snapshot', runId: 'r', seq: 3, more: false, nodes: [node('agent:a', null, 'running', [inst('a#0', 'running')])] });
  assert.equal(applyDelta(m, {
    type: 'graph.delta', runId: 'r', seq: 5,
    nodes: [{ ...node('tool:t', 'agent:a', 'running'), instanceCount: 1 }],
    instances: [{ nodeId: 'tool:t', ...inst('t#0', 'running', { tokens: undefined, tokensAdded: 'hello' }) }],
  }), true);
  const t = m.nodes.get('tool:t');
  assert.equal(t.parent, m.nodes.get('agent:a'));
  assert.equal(t.depth, 1);
  assert.equal(t.tokenTail, 'hello', 'streamed text of a running instance shows on its box');
  assert.deepEqual(m.added.map((n) => n.id), ['agent:a', 'tool:t'], 'the layout places the new node');
  assert.equal(applyDelta(m, {
    type: 'graph.delta', runId: 'r', seq: 6,
    nodes: [{ ...node('tool:t', 'agent:a', 'error'), instanceCount: 1 }],
    instances: [{ nodeId: 'tool:t', ...inst('t#0', 'error', { finishedAt: null, error: { name: 'E', message: 'm' } }) }],
  }), true);
  assert.equal(t.insts.length, 1, 'the instance was replaced, not added');
  assert.equal(t.insts[0].status, 'error');
  assert.equal(t.status, 'error');
  assert.equal(t.errors, 1);
  assert.equal(applyDelta(m, {
    type: 'graph.delta', runId: 'r', seq: 6,
    nodes: [{ ...node('tool:late', 'agent:a', 'running'), instanceCount: 0 }], instances: [],
  }), false, 'a delta at or below the held seq is stale');
  assert.equal(m.nodes.has('tool:late'), false);
});

test('streamed text comes as appended slices; node detail fills what the graph fields do not carry', () => {
  const m = new RunGraph('r');
  applySnapshot(m, { type: 'graph.snapshot', runId: 'r', seq: 1, more: false, nodes: [node('llm:a', null, 'running', [inst('a#0', 'running', { tokens: 'Hel', reasoning: 'h' })])] });
  const a = m.nodes.get('llm:a');
  const delta = (seq, extra) => applyDelta(m, {
    type: 'graph.delta', runId: 'r', seq, nodes: [{ ...node('llm:a', null, 'running'), instanceCount: 1 }],
    instances: [{ nodeId: 'llm:a', ...inst('a#0', 'running', { tokens: undefined, ...extra }) }],
  });
  delta(2, { tokensAdded: 'lo' });
  delta(3, { tokensAdded: ', world', reasoningAdded: 'mm' });
  delta(4, {});
  assert.deepEqual(a.insts[0].tokens, { text: 'Hello, world', reasoning: 'hmm' }, 'slices appended to the snapshot text');
  assert.equal(a.tokenTail, 'Hello, world');
  assert.equal(applyNodeDetail(m, {
    runId: 'r', nodeId: 'llm:a', instances: [{
      instanceId: 'a#0', input: { q: 1 }, output: null, errorDetail: { name: 'E', message: 'm', stack: 'at x' },
      pauses: [{ pauseId: 'p', point: 'before', reason: null, since: 5, resumedAt: 9, action: 'continue', principal: { kind: 'person' } }], started: { redaction: { count: 2 } },
    }],
  }), true);
  const i = a.insts[0];
  assert.deepEqual(i.input, { q: 1 });
  assert.equal(i.output, undefined, 'no output yet');
  assert.equal(i.errorDetail.stack, 'at x');
  assert.deepEqual(i.holds, [{ pauseId: 'p', point: 'before', reason: null, since: 5, until: 9, action: 'continue', principal: { kind: 'person' } }]);
  assert.equal(i.redaction.count, 2);
  assert.equal(applyNodeDetail(m, { nodeId: 'tool:unknown', instances: [] }), false);
});

test('a snapshot read as plain JSON (a GET /graph body) applies like one from the socket', () => {
  const body = { runId: 'r', nodes: [node('agent:a', null, 'ok', [inst('a#0', 'ok')]), node('tool:t', 'agent:a', 'ok', [inst('t#0', 'ok')])], edges: [] };
  const m = new RunGraph('r');
  assert.equal(applySnapshot(m, body), true, 'no `more`: complete');
  assert.equal(m.nodes.get('tool:t').parent, m.nodes.get('agent:a'));
  assert.equal(m.lastSeq, null);
});
