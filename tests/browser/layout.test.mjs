// The viewer's pure modules (layout, task-graph deltas) under Node, without a
// browser. Run graphs are built the way the page builds them: from the server
// projection's deltas (graphdelta.js) into a RunGraph.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunGraph } from '../../ui/dist/js/rungraph.js';
import { applyDelta } from '../../ui/dist/js/graphdelta.js';
import { Layout, BOX_W, BOX_H, OPEN_BUDGET } from '../../ui/dist/js/layout.js';

let seq = 0;
/** One delta adding a running node with one instance under `parentId`. */
const addNode = (m, nodeId, parentId) => applyDelta(m, {
  type: 'graph.delta', runId: m.runId, seq: seq++,
  nodes: [{ nodeId, kind: nodeId.split(':')[0], name: nodeId.split(':')[1], parentId, status: 'running', hinted: false, instanceCount: 1 }],
  instances: [{ nodeId, instanceId: `${nodeId}#0`, status: 'running', startedAt: 1000 + seq, finishedAt: null, durationMs: null, heldMs: null, usage: null, error: null, firstSeq: seq }],
});

test('layout: adding nodes never moves existing boxes, and boxes never overlap', () => {
  seq = 0;
  const m = new RunGraph('r');
  const L = new Layout(m);
  addNode(m, 'agent:root', null);
  L.full();
  const ids = ['agent:root'];
  let rnd = 7;
  const next = () => { rnd = (rnd * 48271) % 2147483647; return rnd; };
  for (let i = 0; i < 1500; i++) {
    const before = [...m.nodes.values()].filter((n) => n.placed).map((n) => [n, n.x, n.y]);
    const parent = ids[next() % ids.length];
    const id = `tool:n${i}`;
    addNode(m, id, parent);
    ids.push(id);
    L.sync();
    for (const [n, x, y] of before) assert.ok(n.x === x && n.y === y, `node ${n.id} moved when ${id} arrived`);
  }
  const placed = [...m.nodes.values()].filter((n) => n.placed);
  for (const col of L.cols) {
    for (let i = 1; i < (col || []).length; i++) assert.ok(col[i].y >= col[i - 1].y + BOX_H, 'column stacks do not overlap');
  }
  for (const n of placed) if (n.parent) assert.ok(n.y >= n.parent.y && n.x > n.parent.x, 'children sit right of and not above their parent');
  // hit-testing finds each box by a point inside it
  for (const n of placed.slice(0, 200)) assert.equal(L.hit(n.x + BOX_W / 2, n.y + BOX_H / 2), n);
  assert.equal(L.hit(-5, 0), null);
});

test('a big run opens folded to about the budget; a full pass reproduces the incremental layout', () => {
  seq = 0;
  const m = new RunGraph('r');
  addNode(m, 'agent:root', null);
  for (let a = 0; a < 20; a++) {
    addNode(m, `chain:c${a}`, 'agent:root');
    for (let b = 0; b < 30; b++) addNode(m, `tool:t${a}-${b}`, `chain:c${a}`);
  }
  const L = new Layout(m);
  L.autoFold();
  L.full();
  assert.ok(L.placedCount <= OPEN_BUDGET, `placed ${L.placedCount}`);
  assert.ok(!m.nodes.get('chain:c0').folded && m.nodes.get('chain:c19').folded, 'breadth-first: early subtrees open, later ones folded');
  const snapshot = [...m.nodes.values()].filter((n) => n.placed).map((n) => `${n.id}@${n.x},${n.y}`);
  L.full();
  assert.deepEqual([...m.nodes.values()].filter((n) => n.placed).map((n) => `${n.id}@${n.x},${n.y}`), snapshot);
});

test('task-graph deltas: nodes and edges replaced by index or appended, changed fields assigned, summary keys merged', async () => {
  const { applyDelta } = await import('../../ui/dist/js/taskgraph.js');
  const g = {
    status: 'RUNNING', nodes: [{ id: 'task' }, { id: 'phase-1', status: 'RUNNING' }], edges: [{ id: 'e1' }],
    summary: { counts: { phases: 1 } },
  };
  const same = applyDelta(g, {
    version: 2, base: 1, node_count: 3, edge_count: 2,
    node_index: [1, 2], nodes: [{ id: 'phase-1', status: 'SUCCESS' }, { id: 'step-1-1' }],
    edge_index: [1], edges: [{ id: 'e2' }],
    fields: { status: 'SUCCESS', summary: { counts: { phases: 1, agents: 1 } } },
  });
  // Only the summary's changed keys travel: the others stay.
  g.summary.retried_steps = [{ id: 'tool-1' }];
  applyDelta(g, { node_index: [], nodes: [], edge_index: [], edges: [], fields: { summary: { tokens: { total: 5 } } } });
  assert.deepEqual(g.summary.retried_steps, [{ id: 'tool-1' }]);
  assert.equal(g.summary.tokens.total, 5);
  assert.equal(g.summary.counts.agents, 1);
  // The critical path travels as a splice of its lists.
  g.critical_path = { node_ids: ['task', 'phase-1', 'step-1-1'], hot_node_ids: ['step-1-1'], edge_ids: ['e1', 'e2'], duration_ms: 5, total_ms: 9 };
  applyDelta(g, {
    node_index: [], nodes: [], edge_index: [], edges: [], fields: {},
    critical_path: { keep: { node_ids: 2, hot_node_ids: 0, edge_ids: 1 }, node_ids: ['step-1-2'], hot_node_ids: ['step-1-2'], edge_ids: ['e3'], duration_ms: 7, total_ms: 12 },
  });
  // A delta without waiting segments means none (an older server's shape).
  assert.deepEqual(g.critical_path, { node_ids: ['task', 'phase-1', 'step-1-2'], hot_node_ids: ['step-1-2'], edge_ids: ['e1', 'e3'], duration_ms: 7, total_ms: 12, waiting: [], waiting_ms: 0 });
  assert.equal(same, g, 'applied in place');
  assert.deepEqual(g.nodes.map((n) => n.id), ['task', 'phase-1', 'step-1-1']);
  assert.equal(g.nodes[1].status, 'SUCCESS');
  assert.deepEqual(g.edges.map((e) => e.id), ['e1', 'e2']);
  assert.equal(g.status, 'SUCCESS');
  assert.equal(g.summary.counts.agents, 1);
  // The critical path travels as a splice of its lists.
  g.critical_path = { node_ids: ['task', 'phase-1', 'step-1-1'], hot_node_ids: ['step-1-1'], edge_ids: ['e1', 'e2'], duration_ms: 5, total_ms: 9 };
  applyDelta(g, {
    node_index: [], nodes: [], edge_index: [], edges: [], fields: {},
    critical_path: { keep: { node_ids: 2, hot_node_ids: 0, edge_ids: 1 }, node_ids: ['step-1-2'], hot_node_ids: ['step-1-2'], edge_ids: ['e3'], duration_ms: 7, total_ms: 12, waiting: [{ kind: 'user_reply', node_id: 'phase-1', start_time: 1, duration_ms: 3 }], waiting_ms: 3 },
  });
  assert.deepEqual(g.critical_path, { node_ids: ['task', 'phase-1', 'step-1-2'], hot_node_ids: ['step-1-2'], edge_ids: ['e1', 'e3'], duration_ms: 7, total_ms: 12, waiting: [{ kind: 'user_reply', node_id: 'phase-1', start_time: 1, duration_ms: 3 }], waiting_ms: 3 });
});
