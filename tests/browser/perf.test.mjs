// Performance figures of the viewer on a big run (reported, not asserted as
// wall-clock): first render of a 5,000-node / 100,000-event run, the frame
// work of one incremental update, page memory. The page-local run takes the
// feed's code path (snapshot parts as JSON text → store → graphdelta.js →
// layout → canvas; live additions as deltas).
// Behaviour is asserted: the big run opens folded, adding nodes moves no
// existing box, the inspector opens a megabyte value, no console errors.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, artifact, PYTHON, ROOT } from './lib/harness.mjs';

let srv;
let browser;

before(async () => {
  srv = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

async function heapMB(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const get = (n) => (metrics.find((m) => m.name === n) || {}).value || 0;
  return { jsHeapUsedMB: +(get('JSHeapUsedSize') / 1048576).toFixed(1), domNodes: get('Nodes') };
}

test('5,000-node / 100,000-event run: first render, incremental update, memory', async () => {
  const { page, errors } = await openPage(browser, srv.url());
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'feed' });
  await page.evaluate(() => window.mindgate.prepareSynthetic(5000, 100000));
  // Measure from a quiet page: wait until the main thread has an idle moment.
  await page.evaluate(() => new Promise((resolve) => requestIdleCallback(() => resolve(), { timeout: 5000 })));
  // Main-thread CPU time (thread ticks) is reported next to wall-clock time:
  // it does not grow when other processes compete for the machine's cores.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  const cpu = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
  const c0 = await cpu();
  const open = await page.evaluate(() => window.mindgate.openSynthetic(5000, 100000));
  const c1 = await cpu();
  const openCpuMs = (c1.TaskDuration - c0.TaskDuration) * 1000;
  assert.equal(open.nodes, 5000);
  assert.ok(open.events >= 100000, `events: ${open.events}`);
  assert.ok(open.visibleBoxes > 0 && open.visibleBoxes <= 300, `a big run opens with deep subtrees folded (visible ${open.visibleBoxes})`);
  const boxes = await page.evaluate(() => window.mindgate.boxes());
  assert.ok(boxes.length > 0, 'boxes in view');
  await page.screenshot({ path: artifact('10-synthetic-5000-nodes.png') });

  // Unfold one folded subtree by clicking its "+N" chip: its children appear.
  const folded = boxes.find((b) => b.folded && b.hidden > 0);
  assert.ok(folded, 'a folded box is in view');
  await page.mouse.click(folded.x + folded.w + 14 * (folded.w / 200), folded.y + folded.h / 2);
  const unfoldedOne = await until(() => page.evaluate((id) => {
    const n = window.mindgate.store.model.nodes.get(id);
    return !n.folded && n.children.every((c) => c.placed) ? n.children.length : 0;
  }, folded.nodeId), { what: 'the clicked subtree to unfold' });
  assert.ok(unfoldedOne > 0);

  const inc = await page.evaluate(() => window.mindgate.measureIncremental(40));
  assert.equal(inc.moved, 0, 'no existing box moved when nodes were added');

  // Unfold everything: all 5,000 boxes placed; measure a full-detail draw and an incremental update again.
  const unfolded = await page.evaluate(async () => {
    const { graph, store } = window.mindgate;
    for (const n of store.model.order) n.folded = false;
    const t0 = performance.now();
    graph.layout.full();
    const layoutMs = performance.now() - t0;
    graph.scale = 0.5; graph.drawNow();
    const drawHalfMs = graph.lastDrawMs;
    graph.fit(); graph.drawNow();
    return { placed: graph.layout.placedCount, fullLayoutMs: layoutMs, drawAtHalfZoomMs: drawHalfMs, drawAllFitMs: graph.lastDrawMs };
  });
  assert.ok(unfolded.placed >= 5000);
  const incAll = await page.evaluate(() => window.mindgate.measureIncremental(40));
  assert.equal(incAll.moved, 0);
  await page.screenshot({ path: artifact('11-synthetic-unfolded-fit.png') });
  const mem = await heapMB(page);

  // Open a ~2 MB output in the inspector and expand one group of it.
  const inspector = await page.evaluate(async () => {
    const { store } = window.mindgate;
    const node = store.model.order.find((n) => n.kind === 'tool');
    const big = Array.from({ length: 20000 }, (_, i) => ({ i, text: `row ${i} `.repeat(8) }));
    node.insts[node.insts.length - 1].output = big;
    const t0 = performance.now();
    store.selectNode(node.id);
    await new Promise((r) => requestAnimationFrame(() => r()));
    const openMs = performance.now() - t0;
    return { bytes: JSON.stringify(big).length, openMs, rows: document.querySelectorAll('#inspector .jt-row').length };
  });
  assert.ok(inspector.rows > 0 && inspector.rows < 200, `JSON tree rows in the DOM are virtualised (${inspector.rows})`);
  await page.getByRole('button', { name: 'Expand entries 100 to 199' }).click();
  await page.locator('#inspector .jt-key', { hasText: /^100$/ }).first().waitFor();

  const figures = {
    firstRenderMs: +open.firstRenderMs.toFixed(1),
    firstRenderMainThreadCpuMs: +openCpuMs.toFixed(1),
    processAndLayoutMs: +open.processAndLayoutMs.toFixed(1),
    parseAndApplyEventsMs: +open.eventsMs.toFixed(1),
    nodes: open.nodes, events: open.events, instances: open.instances, visibleBoxesAtOpen: open.visibleBoxes,
    incrementalFolded: { medianMs: +inc.medianMs.toFixed(2), p95Ms: +inc.p95Ms.toFixed(2), maxMs: +inc.maxMs.toFixed(2) },
    incrementalAllUnfolded: { medianMs: +incAll.medianMs.toFixed(2), p95Ms: +incAll.p95Ms.toFixed(2), maxMs: +incAll.maxMs.toFixed(2) },
    unfolded: { placed: unfolded.placed, fullLayoutMs: +unfolded.fullLayoutMs.toFixed(1), drawAtHalfZoomMs: +unfolded.drawAtHalfZoomMs.toFixed(1), drawAllFitMs: +unfolded.drawAllFitMs.toFixed(1) },
    memory: { heapMB: mem.jsHeapUsedMB, domNodes: mem.domNodes },
    inspector2MB: { bytes: inspector.bytes, openMs: +inspector.openMs.toFixed(1), domRows: inspector.rows },
  };
  console.log(`VIEWER-PERF ${JSON.stringify(figures)}`);
  writeFileSync(artifact('perf.json'), JSON.stringify(figures, null, 2));
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('page memory without a run open (baseline)', async () => {
  const { page, errors } = await openPage(browser, srv.url());
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'feed' });
  const mem = await heapMB(page);
  console.log(`VIEWER-PERF-BASELINE ${JSON.stringify(mem)}`);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a 100,000-event run stored by the server opens through its /ws/ui graph snapshot', { timeout: 300000 }, async () => {
  const ingest = spawnSync(PYTHON, [path.join(ROOT, 'tests/browser/agents/synthetic_ingest.py'), `ws://127.0.0.1:${srv.port}/ingest`, '5000', '100000'], { encoding: 'utf8', timeout: 240000 });
  assert.equal(ingest.status, 0, ingest.stderr);
  const [, runId, sent] = /RUN (\S+) (\d+)/.exec(ingest.stdout);
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs?limit=5`);
    const data = await res.json();
    const r = (data.runs || []).find((x) => x.id === runId);
    return r && r.counts && r.counts.events >= Number(sent);
  }, { timeout: 120000, interval: 500, what: 'all events stored' });
  const { page, errors } = await openPage(browser, srv.url());
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'feed' });
  // Long tasks (> 50 ms) while the graph streams in: how close the page came to freezing.
  await page.evaluate((id) => {
    window.longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(e.duration); }).observe({ type: 'longtask' });
    location.hash = `#/run/${encodeURIComponent(id)}`;
  }, runId);
  const opened = await until(() => page.evaluate(() => window.mindgate.store.lastOpen || null), { timeout: 120000, interval: 20, what: 'the run to draw' });
  const boxesAtFirstDraw = (await page.evaluate(() => window.mindgate.boxes())).length;
  const done = await until(() => page.evaluate(() => window.mindgate.store.replayDone || null), { timeout: 120000, interval: 50, what: 'the graph to arrive' });
  const longTasks = await page.evaluate(() => window.longTasks);
  assert.equal(opened.runId, runId);
  assert.ok(boxesAtFirstDraw > 0, 'boxes are drawn once the graph is in');
  assert.equal(done.nodes, 5000);
  assert.equal(done.events, Number(sent));
  const figures = {
    events: done.events, nodes: done.nodes,
    subscribeToFirstDrawMs: +opened.ms.toFixed(0), firstDrawWasPartial: opened.partial, eventsAtFirstDraw: opened.events,
    subscribeToCompleteMs: +done.ms.toFixed(0), pageBusyDuringReplayMs: +done.pageBusyMs.toFixed(0),
    longTasksOver50ms: longTasks.length, longestTaskMs: Math.round(Math.max(0, ...longTasks)),
  };
  console.log(`VIEWER-PERF-REPLAY ${JSON.stringify(figures)}`);
  writeFileSync(artifact('perf-replay.json'), JSON.stringify(figures, null, 2));
  await page.screenshot({ path: artifact('12-replayed-100k-events.png') });
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('450 runs: the run list is virtualised, newest first, and pages older runs in', { timeout: 120000 }, async () => {
  const ingest = spawnSync(PYTHON, [path.join(ROOT, 'tests/browser/agents/synthetic_ingest.py'), `ws://127.0.0.1:${srv.port}/ingest`, 'runs', '450'], { encoding: 'utf8', timeout: 60000 });
  assert.equal(ingest.status, 0, ingest.stderr);
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs?limit=1&q=run-00000`);
    const data = await res.json();
    return (data.runs || []).some((r) => r.status === 'error');
  }, { timeout: 60000, interval: 300, what: 'the oldest run stored' });
  const { page, errors } = await openPage(browser, srv.url());
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'feed' });
  await page.getByRole('combobox', { name: 'Filter runs by status' }).selectOption('all');
  const total = () => page.evaluate(() => window.mindgate.store.runsOrdered.length);
  await until(async () => (await total()) >= 200, { what: 'first page of runs' });
  const first = await page.locator('.run-button .run-name').first().textContent();
  assert.ok(first === 'run-00449' || first.startsWith('synthetic'), `newest first (got ${first})`);
  const rows = await page.locator('.run-row').count();
  assert.ok(rows < 40, `only the rows in view exist in the DOM (${rows})`);
  const more = page.getByRole('button', { name: 'Load older runs' });
  for (let i = 0; i < 5 && await more.isVisible(); i++) {
    const before = await total();
    await more.click();
    await until(async () => (await total()) > before || !(await more.isVisible()), { what: 'an older page' });
  }
  assert.ok((await total()) >= 450, `all runs reachable (${await total()})`);
  assert.equal(await more.isVisible(), false, 'no more pages');
  // Scrolled to the end, the oldest run is there.
  await page.locator('.runs .vlist').evaluate((e) => { e.scrollTop = e.scrollHeight; });
  await page.locator('.run-button .run-name', { hasText: 'run-00000' }).waitFor();
  await page.getByRole('combobox', { name: 'Filter runs by status' }).selectOption('error');
  await until(async () => (await page.locator('.run-button .pill').allTextContents()).every((t) => t === 'error'), { what: 'only failed runs' });
  await page.screenshot({ path: artifact('13-run-list-450-runs.png') });
  assert.deepEqual(errors, []);
  await page.context().close();
});
