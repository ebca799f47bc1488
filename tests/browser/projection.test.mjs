// The two run-graph designs side by side on a real page (docs/architecture.md
// § "One run graph"): the viewer's own fold of the /ws/ui event replay
// (runmodel.js) and the server projection (experimental: subscribe with
// `projection: true`, a snapshot then deltas applied by graphdelta.js).
//
// By default a small run (1,000 nodes / 4,000 events): both pages must hold the
// same graph, and a live event must reach both drawings. With
// MINDGATE_PERF_PROJECTION=1 the run is 5,000 nodes / 100,000 events and the
// test prints the figures (`PROJECTION-PERF {...}`), reported, never asserted.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, artifact, PYTHON, ROOT } from './lib/harness.mjs';

const BIG = process.env.MINDGATE_PERF_PROJECTION === '1';
const NODES = BIG ? 5000 : 1000;
const EVENTS = BIG ? 100000 : 4000;
const LIVE_EVENTS = BIG ? 10 : 2;

let srv;
let browser;
let app;

before(async () => {
  srv = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (app && app.exitCode === null) app.kill('SIGKILL');
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

/** The synthetic app, left connected with its run open; `send(name)` emits one live node. */
function startApp() {
  const child = spawn(PYTHON, [path.join(ROOT, 'tests/browser/agents/synthetic_ingest.py'), `ws://127.0.0.1:${srv.port}/ingest`, String(NODES), String(EVENTS), '--tail'],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  return {
    child,
    async run() {
      const m = await until(() => {
        if (child.exitCode !== null) throw new Error(`the app exited (${child.exitCode}): ${err}`);
        return /RUN (\S+) (\d+)/.exec(out);
      }, { timeout: 240000, interval: 100, what: 'the app to send its run' });
      return { runId: m[1], sent: Number(m[2]) };
    },
    async send(name) {
      child.stdin.write(`${name}\n`);
      const re = new RegExp(`SENT ${name} (\\S+)`);
      const m = await until(() => re.exec(out), { timeout: 10000, interval: 5, what: `the app to send ${name}` });
      return Number(m[1]);
    },
  };
}

/** The open run's graph as both designs can state it: nodes, parents, states, instances. */
const modelShape = () => {
  const m = window.mindgate.store.model;
  return m.order.map((n) => ({
    nodeId: n.id, kind: n.kind, name: n.name, parentId: n.parent ? n.parent.id : null, status: n.status,
    instances: n.insts.map((i) => [i.id, i.status]),
  }));
};

async function cpuMeter(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  return async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value])).TaskDuration * 1000;
}

/** The page's JS heap after a garbage collection (MB). */
async function heapMB(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  return +(((metrics.find((m) => m.name === 'JSHeapUsedSize') || {}).value || 0) / 1048576).toFixed(1);
}

async function livePage(url) {
  const opened = await openPage(browser, url);
  await until(() => opened.page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'feed' });
  await opened.page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(e.duration); }).observe({ type: 'longtask' });
  });
  return opened;
}

/** Median and max of one live event → drawn, over `count` events (ms). */
async function liveTail(pages, count, prefix) {
  const samples = pages.map(() => []);
  for (let i = 0; i < count; i++) {
    const name = `${prefix}${i}`;
    const drawn = pages.map((p) => p.evaluate((id) => window.mindgate.whenDrawn(id), `tool:live-${name}`));
    // whenDrawn is armed in each page before the event is sent.
    await Promise.all(pages.map((p) => p.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())))));
    const sentAt = await app.send(name);
    const at = await Promise.all(drawn);
    at.forEach((t, k) => samples[k].push(t - sentAt));
  }
  return samples.map((s) => {
    const sorted = [...s].sort((a, b) => a - b);
    return { medianMs: +sorted[Math.floor(sorted.length / 2)].toFixed(1), maxMs: +sorted[sorted.length - 1].toFixed(1) };
  });
}

test(`${NODES}-node / ${EVENTS}-event run: the server projection and the page's fold give the same graph, live events reach both`, { timeout: BIG ? 600000 : 60000 }, async () => {
  app = startApp();
  const { runId, sent } = await app.run();
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs/${encodeURIComponent(runId)}`);
    return res.ok && (await res.json()).counts.events >= sent;
  }, { timeout: 120000, interval: 200, what: 'all events stored' });

  // Design A: the viewer's own fold of the event replay.
  const a = await livePage(srv.url());
  const cpuA = await cpuMeter(a.page);
  const bytesA = await a.page.evaluate(() => {
    window.feedBytes = 0;
    window.mindgate.store.feed.ws.addEventListener('message', (e) => { window.feedBytes += e.data.length; });
  });
  void bytesA;
  const cpuA0 = await cpuA();
  await a.page.evaluate((id) => { location.hash = `#/run/${encodeURIComponent(id)}`; }, runId);
  const doneA = await until(() => a.page.evaluate((id) => {
    const d = window.mindgate.store.replayDone;
    return d && d.runId === id ? d : null;
  }, runId), { timeout: 120000, interval: 20, what: 'the replay to end' });
  await a.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  const cpuA1 = await cpuA();
  const pageA = await a.page.evaluate(() => ({ bytes: window.feedBytes, longTasks: window.longTasks }));

  // Design B: the server projection, snapshot then deltas.
  const b = await livePage(srv.url());
  const cpuB = await cpuMeter(b.page);
  const cpuB0 = await cpuB();
  const doneB = await b.page.evaluate((id) => window.mindgate.openProjected(id), runId);
  const cpuB1 = await cpuB();
  const pageB = await b.page.evaluate(() => ({ longTasks: window.longTasks }));

  assert.equal(doneA.nodes, NODES);
  assert.equal(doneB.nodes, NODES);
  assert.equal(doneB.lastSeq, sent - 1, 'the snapshot holds every stored event');
  const shapeA = await a.page.evaluate(modelShape);
  const shapeB = await b.page.evaluate(modelShape);
  assert.deepEqual(shapeB, shapeA, 'the projection and the page fold agree on every node and instance');
  assert.ok((await b.page.evaluate(() => window.mindgate.boxes())).length > 0, 'the projected graph is drawn');

  const [heapA, heapB] = [await heapMB(a.page), await heapMB(b.page)];
  const [tailA, tailB] = await liveTail([a.page, b.page], LIVE_EVENTS, 'n');
  const afterLive = await b.page.evaluate(() => ({ deltas: window.mindgate.store.projection.deltas }));
  assert.ok(afterLive.deltas >= LIVE_EVENTS, `live events came as deltas (${afterLive.deltas})`);
  assert.deepEqual(await b.page.evaluate(modelShape), await a.page.evaluate(modelShape), 'still the same graph after the live events');

  const figures = {
    nodes: NODES, events: sent,
    clientFold: {
      subscribeToCompleteMs: Math.round(doneA.ms), pageBusyMs: Math.round(doneA.pageBusyMs), mainThreadCpuMs: Math.round(cpuA1 - cpuA0),
      bytes: pageA.bytes, heapMB: heapA, longTasksOver50ms: pageA.longTasks.length, longestTaskMs: Math.round(Math.max(0, ...pageA.longTasks)), liveEventToDrawn: tailA,
    },
    serverProjection: {
      subscribeToCompleteMs: Math.round(doneB.subscribeToCompleteMs), subscribeToDrawnMs: Math.round(doneB.subscribeToDrawnMs), pageBusyMs: Math.round(doneB.pageBusyMs),
      mainThreadCpuMs: Math.round(cpuB1 - cpuB0), bytes: doneB.bytes, heapMB: heapB, longTasksOver50ms: pageB.longTasks.length,
      longestTaskMs: Math.round(Math.max(0, ...pageB.longTasks)), liveEventToDrawn: tailB,
    },
  };
  console.log(`PROJECTION-PERF ${JSON.stringify(figures)}`);
  writeFileSync(artifact(BIG ? 'projection-perf.json' : 'projection-small.json'), JSON.stringify(figures, null, 2));
  assert.deepEqual(a.errors, []);
  assert.deepEqual(b.errors, []);
  app.child.stdin.end();
  await a.page.context().close();
  await b.page.context().close();
});
