// The viewer on a big stored run through the server projection (docs/
// architecture.md § "One run graph"): the page subscribes to the run, the
// server sends its graph as `graph.snapshot` parts then `graph.delta`s, and
// graphdelta.js copies them into the graph the page draws.
//
// By default a small run (1,000 nodes / 4,000 events): the page must hold the
// graph `GET /api/runs/:id/graph` answers, and live events must be drawn. With
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

/** The open run's graph as the page holds it: nodes, parents, states, instances. */
const modelShape = () => {
  const m = window.mindgate.store.model;
  return m.order.map((n) => ({
    nodeId: n.id, kind: n.kind, name: n.name, parentId: n.parent ? n.parent.id : null, status: n.status,
    instances: n.insts.map((i) => [i.id, i.status]),
  }));
};

/** The same shape, read from `GET /api/runs/:id/graph`. */
async function storedShape(runId) {
  const res = await fetch(`${srv.base}/api/runs/${encodeURIComponent(runId)}/graph`);
  const graph = await res.json();
  return graph.nodes.map((n) => ({
    nodeId: n.nodeId, kind: n.kind, name: n.name, parentId: n.parentId, status: n.status,
    instances: n.instances.map((i) => [i.instanceId, i.status]),
  }));
}

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

test(`${NODES}-node / ${EVENTS}-event run: the page holds the stored graph, live events are drawn`, { timeout: BIG ? 600000 : 60000 }, async () => {
  app = startApp();
  const { runId, sent } = await app.run();
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs/${encodeURIComponent(runId)}`);
    return res.ok && (await res.json()).counts.events >= sent;
  }, { timeout: 120000, interval: 200, what: 'all events stored' });

  const { page, errors } = await livePage(srv.url());
  const cpu = await cpuMeter(page);
  await page.evaluate(() => {
    window.feedBytes = 0;
    window.feedMessages = 0;
    window.mindgate.store.feed.ws.addEventListener('message', (e) => { window.feedBytes += e.data.length; window.feedMessages++; });
  });
  const cpu0 = await cpu();
  await page.evaluate((id) => { location.hash = `#/run/${encodeURIComponent(id)}`; }, runId);
  const done = await until(() => page.evaluate((id) => {
    const d = window.mindgate.store.replayDone;
    return d && d.runId === id ? d : null;
  }, runId), { timeout: 120000, interval: 20, what: 'the graph to arrive' });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  const cpu1 = await cpu();
  const opened = await page.evaluate(() => ({ bytes: window.feedBytes, messages: window.feedMessages, longTasks: window.longTasks, lastSeq: window.mindgate.store.model.lastSeq }));

  assert.equal(done.nodes, NODES);
  assert.equal(opened.lastSeq, sent - 1, 'the snapshot holds every stored event');
  assert.deepEqual(await page.evaluate(modelShape), await storedShape(runId), 'the page holds the graph the server stores');
  assert.ok((await page.evaluate(() => window.mindgate.boxes())).length > 0, 'the graph is drawn');

  const heap = await heapMB(page);
  const [tail] = await liveTail([page], LIVE_EVENTS, 'n');
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs/${encodeURIComponent(runId)}`);
    return (await res.json()).counts.events >= sent + LIVE_EVENTS;
  }, { what: 'the live events stored' });
  await until(async () => JSON.stringify(await page.evaluate(modelShape)) === JSON.stringify(await storedShape(runId)), { what: 'the same graph after the live events' });

  const figures = {
    nodes: NODES, events: sent,
    serverProjection: {
      subscribeToCompleteMs: Math.round(done.ms), pageBusyMs: Math.round(done.pageBusyMs), mainThreadCpuMs: Math.round(cpu1 - cpu0),
      bytes: opened.bytes, messages: opened.messages, heapMB: heap, longTasksOver50ms: opened.longTasks.length,
      longestTaskMs: Math.round(Math.max(0, ...opened.longTasks)), liveEventToDrawn: tail,
    },
  };
  console.log(`PROJECTION-PERF ${JSON.stringify(figures)}`);
  writeFileSync(artifact(BIG ? 'projection-perf.json' : 'projection-small.json'), JSON.stringify(figures, null, 2));
  assert.deepEqual(errors, []);
  app.child.stdin.end();
  await page.context().close();
});
