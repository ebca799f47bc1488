// The viewer's run model against the run-graph corpus: the same event
// sequences and expected graphs crates/store/tests/run_graph_corpus.rs runs
// through store::projection (the graph API and the MCP tools), so the page and
// the server apply one set of rules (docs/run-graph.md).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RunModel } from '../../ui/dist/js/runmodel.js';

const corpus = JSON.parse(readFileSync(new URL('../../crates/store/tests/fixtures/run_graph_corpus.json', import.meta.url), 'utf8'));

/** The model in the corpus's shape: nodes in order, instances with state and text. */
function normalized(model) {
  return model.order.map((n) => ({
    nodeId: n.id, kind: n.kind, name: n.name, parentId: n.parentId, status: n.status,
    instances: n.insts.map((i) => ({ instanceId: i.id, status: i.status, text: i.tokens.text || '' })),
  }));
}

test('the corpus has its cases', () => {
  assert.ok(corpus.cases.length >= 20);
});

for (const c of corpus.cases) {
  test(`run-graph corpus: ${c.name}`, () => {
    const model = new RunModel('r');
    c.events.forEach(([type, payload], i) => model.apply({ gm: 1, seq: i, ts: 1000 + 10 * i, runId: 'r', type, payload }));
    assert.deepEqual(normalized(model), c.graph);
  });
}

test('the tree agrees with the parent ids: children lists, depths and descendant counts', () => {
  for (const c of corpus.cases) {
    const model = new RunModel('r');
    c.events.forEach(([type, payload], i) => model.apply({ gm: 1, seq: i, ts: 1000 + 10 * i, runId: 'r', type, payload }));
    for (const n of model.order) {
      assert.equal(n.parent ? n.parent.id : null, n.parentId, c.name);
      if (n.parent) assert.ok(n.parent.children.includes(n), c.name);
      assert.equal(n.depth, n.parent ? n.parent.depth + 1 : 0, c.name);
      const count = (x) => x.children.reduce((sum, ch) => sum + 1 + count(ch), 0);
      assert.equal(n.desc, count(n), c.name);
    }
    assert.deepEqual(model.roots.map((n) => n.id), model.order.filter((n) => !n.parent).map((n) => n.id), c.name);
  }
});
