// The viewer's pure modules (run model, layout) under Node, without a browser.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunModel } from '../../ui/dist/js/runmodel.js';
import { Layout, BOX_W, BOX_H, OPEN_BUDGET } from '../../ui/dist/js/layout.js';

let seq = 0;
const env = (type, payload, ts = 1000 + seq) => ({ gm: 1, seq: seq++, ts, runId: 'r', type, payload });

test('one box per logical node, instances light it up; tools default under the run agent', () => {
  seq = 0;
  const m = new RunModel('r');
  m.apply(env('run.started', { app: 'a', sdk: { name: 'py', version: '1' }, meta: { name: 'ticket' } }));
  m.apply(env('node.started', { nodeId: 'agent:ticket', kind: 'agent', name: 'ticket', instanceId: 'r' }));
  for (let i = 0; i < 11; i++) {
    m.apply(env('node.started', { nodeId: 'tool:search', kind: 'tool', name: 'search', instanceId: `c${i}` }));
    m.apply(env('node.finished', { nodeId: 'tool:search', instanceId: `c${i}`, durationMs: 3, status: i === 10 ? 'error' : 'ok' }));
  }
  assert.equal(m.nodes.size, 2);
  const tool = m.nodes.get('tool:search');
  assert.equal(tool.insts.length, 11);
  assert.equal(tool.parentId, 'agent:ticket');
  assert.equal(tool.status, 'error', 'aggregate status follows the latest instance');
  assert.equal(m.info.name, 'ticket');
  m.apply(env('run.finished', { status: 'ok' }));
  assert.equal(m.info.status, 'ok');
});

test('duplicates (same seq) are applied once; children before parents get a placeholder parent', () => {
  seq = 0;
  const m = new RunModel('r');
  const e = env('node.started', { nodeId: 'tool:x', kind: 'tool', name: 'x', parentId: 'chain:plan', instanceId: 'i1' });
  assert.equal(m.apply(e), true);
  assert.equal(m.apply(e), false, 'same seq again is ignored');
  const parent = m.nodes.get('chain:plan');
  assert.ok(parent.placeholder, 'parent exists as a placeholder');
  assert.equal(parent.children[0].id, 'tool:x');
  m.apply(env('node.started', { nodeId: 'chain:plan', kind: 'chain', name: 'plan', instanceId: 'p1' }));
  assert.equal(parent.placeholder, false);
  assert.equal(parent.name, 'plan');
  assert.equal(m.instList.length, 2);
});

test('hinted nodes are grey until they run; tokens, errors and holds land on the right instance', () => {
  seq = 0;
  const m = new RunModel('r');
  m.apply(env('graph.hint', { nodes: [{ nodeId: 'tool:refund', kind: 'tool', name: 'refund' }] }));
  assert.equal(m.nodes.get('tool:refund').status, 'hinted');
  m.apply(env('node.started', { nodeId: 'llm:step', kind: 'llm', name: 'step', instanceId: 's1' }));
  m.apply(env('node.started', { nodeId: 'llm:step', kind: 'llm', name: 'step', instanceId: 's2' }));
  m.apply(env('node.token', { nodeId: 'llm:step', instanceId: 's1', deltas: [{ t: 'text', v: 'Hel' }, { t: 'text', v: 'lo' }] }));
  m.apply(env('node.token', { nodeId: 'llm:step', deltas: [{ t: 'reasoning', v: 'hmm' }] }));
  assert.equal(m.instances.get('s1').tokens.text, 'Hello');
  assert.equal(m.instances.get('s2').tokens.reasoning, 'hmm', 'without instanceId: the latest open instance');
  m.apply(env('exec.paused', { pauseId: 'p1', nodeId: 'llm:step', point: 'before', instanceId: 's1' }));
  m.apply(env('exec.resumed', { pauseId: 'p1', action: 'inject' }));
  assert.equal(m.instances.get('s1').holds[0].action, 'inject');
  m.apply(env('node.error', { nodeId: 'llm:step', instanceId: 's1', error: { name: 'Boom', message: 'x' } }));
  m.apply(env('node.finished', { nodeId: 'llm:step', instanceId: 's1', status: 'ok', injected: true, recoveredFromError: true, output: 42 }));
  const s1 = m.instances.get('s1');
  assert.equal(s1.error.name, 'Boom');
  assert.equal(s1.status, 'ok');
  assert.equal(s1.output, 42);
  assert.equal(m.nodes.get('llm:step').status, 'running', 's2 still runs');
});

test('layout: adding nodes never moves existing boxes, and boxes never overlap', () => {
  seq = 0;
  const m = new RunModel('r');
  const L = new Layout(m);
  m.apply(env('node.started', { nodeId: 'agent:root', kind: 'agent', name: 'root', instanceId: 'r' }));
  L.full();
  const ids = ['agent:root'];
  let rnd = 7;
  const next = () => { rnd = (rnd * 48271) % 2147483647; return rnd; };
  for (let i = 0; i < 1500; i++) {
    const before = [...m.nodes.values()].filter((n) => n.placed).map((n) => [n, n.x, n.y]);
    const parent = ids[next() % ids.length];
    const id = `tool:n${i}`;
    m.apply(env('node.started', { nodeId: id, kind: 'tool', name: `n${i}`, parentId: parent, instanceId: `i${i}` }));
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
  const m = new RunModel('r');
  m.apply(env('node.started', { nodeId: 'agent:root', kind: 'agent', name: 'root', instanceId: 'r' }));
  for (let a = 0; a < 20; a++) {
    m.apply(env('node.started', { nodeId: `chain:c${a}`, kind: 'chain', name: `c${a}`, parentId: 'agent:root', instanceId: `c${a}` }));
    for (let b = 0; b < 30; b++) {
      m.apply(env('node.started', { nodeId: `tool:t${a}-${b}`, kind: 'tool', name: `t${a}-${b}`, parentId: `chain:c${a}`, instanceId: `t${a}-${b}` }));
    }
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
  assert.deepEqual(g.critical_path, { node_ids: ['task', 'phase-1', 'step-1-2'], hot_node_ids: ['step-1-2'], edge_ids: ['e1', 'e3'], duration_ms: 7, total_ms: 12 });
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
    critical_path: { keep: { node_ids: 2, hot_node_ids: 0, edge_ids: 1 }, node_ids: ['step-1-2'], hot_node_ids: ['step-1-2'], edge_ids: ['e3'], duration_ms: 7, total_ms: 12 },
  });
  assert.deepEqual(g.critical_path, { node_ids: ['task', 'phase-1', 'step-1-2'], hot_node_ids: ['step-1-2'], edge_ids: ['e1', 'e3'], duration_ms: 7, total_ms: 12 });
});
