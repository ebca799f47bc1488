// The first hour (issue 24, items 3, 6, 8), end to end on a fresh home with the real binary:
// empty states that say what fills them (and "Run the demo" starting the demo from the page,
// one at a time), a newly held gate opening its run, every figure of a corpus of runs the
// same on every surface (run list, run detail, graph, report, MCP get_run, `mindgate runs`,
// the page), a held run's duration ticking, and the Compare view fitting at 1280×800 and
// 1440×900 with searchable run pickers and a short "unpriced" badge. Screenshots: test-artifacts/numbers/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, launchBrowser, openPage, runAgent, until, ROOT } from './lib/harness.mjs';

const SHOTS = path.join(ROOT, 'test-artifacts', 'numbers');
const BIN = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');
const shot = (name) => { mkdirSync(SHOTS, { recursive: true }); return path.join(SHOTS, name); };

let srv;
let browser;
let noSessions;
let watcher;
const runs = {};

async function get(p) {
  const res = await fetch(`${srv.base}${p}`, { headers: { Authorization: `Bearer ${srv.token}` } });
  assert.equal(res.status, 200, `${p}: ${res.status}`);
  return res.json();
}

async function post(p, body) {
  return fetch(`${srv.base}${p}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

// ---- MCP over streamable HTTP (the /mcp mount), as a coding agent calls it --------------
async function mcpCall(session, method, params, id) {
  const headers = {
    Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
  };
  if (session.id) headers['Mcp-Session-Id'] = session.id;
  const body = id === undefined ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id, method, params };
  const res = await fetch(`${srv.base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  assert.ok(res.status < 300, `${method}: ${res.status}`);
  if (res.headers.get('mcp-session-id')) session.id = res.headers.get('mcp-session-id');
  if (id === undefined) return null;
  const text = await res.text();
  const json = (res.headers.get('content-type') || '').includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean).map((l) => JSON.parse(l)).find((m) => m.id === id)
    : JSON.parse(text);
  assert.ok(json && json.result, `${method}: ${text.slice(0, 400)}`);
  return json.result;
}

async function mcpGetRun(runId) {
  const session = {};
  await mcpCall(session, 'initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'numbers-test', version: '1' } }, 1);
  await mcpCall(session, 'notifications/initialized', {});
  const result = await mcpCall(session, 'tools/call', { name: 'get_run', arguments: { runId } }, 2);
  assert.ok(result.structuredContent, `get_run ${runId}: ${JSON.stringify(result).slice(0, 300)}`);
  return { value: result.structuredContent, text: result.content.map((c) => c.text || '').join('\n') };
}

// ---- OTLP ---------------------------------------------------------------------------------
const TRACE = '7a8efff798038103d269b633813fc6aa';
async function sendTrace() {
  const now = BigInt(Date.now()) * 1000000n;
  const span = (spanId, parentSpanId, name, attrs, offsetMs) => ({
    traceId: TRACE, spanId, parentSpanId, name, kind: 'SPAN_KIND_INTERNAL',
    startTimeUnixNano: String(now + BigInt(offsetMs) * 1000000n), endTimeUnixNano: String(now + BigInt(offsetMs + 200) * 1000000n),
    attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } })),
  });
  const res = await fetch(`${srv.base}/v1/traces`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'otel-numbers' } }] }, scopeSpans: [{ spans: [
      span('aaa19b7ec3c1b175', 'aaa19b7ec3c1b174', 'chat gpt-4o', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 30 }, 10),
      span('aaa19b7ec3c1b176', 'aaa19b7ec3c1b174', 'execute_tool search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' }, 300),
      span('aaa19b7ec3c1b174', '', 'invoke_agent planner', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' }, 0),
    ] }] }] }),
  });
  assert.equal(res.status, 200, await res.text());
  return `otlp-${TRACE}`;
}

before(async () => {
  // A fresh home in every sense: no coding-agent sessions from this machine either.
  noSessions = mkdtempSync(path.join(tmpdir(), 'mindgate-no-sessions-'));
  for (const v of ['DSH_HOME', 'PI_CODING_AGENT_DIR', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME']) process.env[v] = noSessions;
  srv = await startServer({ extraArgs: ['--otlp-port', '0'] });
  browser = await launchBrowser();
});

after(async () => {
  runs.agent?.kill();
  if (watcher) await watcher.close();
  if (browser) await browser.close();
  if (srv) await srv.stop();
  if (noSessions) rmSync(noSessions, { recursive: true, force: true });
});

test('empty run list, graph, Tasks and memory each say what fills them and offer it', async () => {
  for (const scheme of ['light', 'dark']) {
    const { page, context, errors } = await openPage(browser, srv.url(), { colorScheme: scheme });
    const runsEmpty = page.locator('[data-testid="runs-empty"]');
    await runsEmpty.waitFor();
    assert.match(await runsEmpty.textContent(), /No runs yet: run the demo, or start an app instrumented with GraphMind/);
    assert.equal(await runsEmpty.locator('[data-testid="run-demo"]').isVisible(), true, 'the run list offers the demo');
    const graphEmpty = page.locator('[data-testid="graph-empty-first"]');
    assert.equal(await graphEmpty.isVisible(), true);
    assert.equal(await graphEmpty.locator('[data-testid="run-demo"]').isVisible(), true, 'the empty graph offers the demo');
    assert.equal(await page.locator('.runs .panel-head .muted').textContent(), '0 runs');
    await page.screenshot({ path: shot(`empty-runs-${scheme}.png`) });

    await page.evaluate(() => { location.hash = '#/tasks'; });
    const tasksEmpty = page.locator('[data-testid="tasks-empty"]');
    await tasksEmpty.waitFor();
    assert.match(await tasksEmpty.textContent(), /No coding-agent sessions found.*mindgate serve --sessions PATH/);
    await page.screenshot({ path: shot(`empty-tasks-${scheme}.png`) });

    await page.evaluate(() => { location.hash = '#/memory'; });
    const memEmpty = page.locator('[data-testid="memory-empty"]');
    await memEmpty.waitFor({ state: 'visible' });
    assert.match(await memEmpty.textContent(), /No memory yet.*mindgate mcp.*mindgate memory remember/);
    await page.screenshot({ path: shot(`empty-memory-${scheme}.png`) });
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('"Run the demo" starts the demo against this server, one at a time; its held gate opens its run', async () => {
  const { page, context, errors } = await openPage(browser, srv.url());
  await page.locator('[data-testid="graph-empty-first"] [data-testid="run-demo"]').click();
  // The demo's run opens by itself and its error gate holds for the person watching.
  await until(() => page.evaluate(() => location.hash.startsWith('#/run/')), { what: 'the demo run opened' });
  await page.locator('.pause-item').first().waitFor({ timeout: 30000 });
  const second = await post('/api/demo');
  assert.equal(second.status, 409, 'a second demo while the first runs is refused');
  assert.match((await second.json()).error, /already running/);
  const { pauses } = await get('/api/pauses');
  assert.equal(pauses.length, 1, JSON.stringify(pauses));
  runs.demo = pauses[0].runId;
  assert.equal(await page.evaluate(() => window.mindgate.store.runId), runs.demo);
  await page.screenshot({ path: shot('demo-held-light.png') });
  // Abort it: the demo ends (an aborted run of the corpus) and may start again.
  const res = await post(`/api/runs/${encodeURIComponent(runs.demo)}/pauses/${encodeURIComponent(pauses[0].pauseId)}/resume`, { action: 'abort' });
  assert.equal((await res.json()).result, 'resumed');
  await until(async () => (await get(`/api/runs/${encodeURIComponent(runs.demo)}`)).status === 'aborted', { what: 'the demo run aborted' });
  await until(async () => {
    const again = await post('/api/demo');
    if (again.status === 202) return true;
    assert.equal(again.status, 409);
    return false;
  }, { what: 'a new demo accepted once the first ended', timeout: 20000 });
  await until(async () => (await get('/api/pauses')).pauses.length === 1, { what: 'the second demo held', timeout: 30000 });
  const held = (await get('/api/pauses')).pauses[0];
  const done = await post(`/api/runs/${encodeURIComponent(held.runId)}/pauses/${encodeURIComponent(held.pauseId)}/resume`, { action: 'abort' });
  assert.equal((await done.json()).result, 'resumed');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a gate that holds while no run is open opens its run', async () => {
  await until(async () => (await get('/api/pauses')).pauses.length === 0, { what: 'no gate held' });
  // The demo has ended every run it started: a run starting later would be followed by the
  // idle page (as it should) and race the gate this test is about.
  await until(async () => (await get('/api/runs?limit=200')).runs.every((r) => r.status !== 'running'), { what: 'no run running' });
  const { page, context, errors } = await openPage(browser, srv.url());
  // A breakpoint before the agent's first tool: the run starts (and the page follows it).
  await post('/api/breakpoints', { kind: 'tool', name: 'search_flights', point: 'before' });
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'held-trip', AGENT_FAIL: '1' });
  await until(async () => (await get('/api/pauses')).pauses.length === 1, { what: 'the breakpoint held', timeout: 20000 });
  const first = (await get('/api/pauses')).pauses[0];
  runs.held = first.runId;
  // The page has seen that gate (and opened its run) before the person goes back to the run
  // list: no run is open then, and only a gate held after that may open one.
  await until(() => page.evaluate((p) => window.mindgate.store.pauses.some((x) => x.pauseId === p.pauseId)
    && window.mindgate.store.runId === p.runId, first), { what: 'the page saw the first gate' });
  // (Pressed again while the run's graph is still settling: its selection may write the run
  // back into the address.)
  await until(() => page.evaluate(() => {
    if (window.mindgate.store.runId !== null && location.hash !== '#/') location.hash = '#/';
    return window.mindgate.store.runId === null;
  }), { what: 'no run open' });
  await fetch(`${srv.base}/api/breakpoints`, {
    method: 'DELETE', headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ kind: 'tool', name: 'search_flights', point: 'before' }),
  });
  const res = await post(`/api/runs/${encodeURIComponent(first.runId)}/pauses/${encodeURIComponent(first.pauseId)}/resume`, { action: 'continue' });
  assert.equal((await res.json()).result, 'resumed');
  // check_visa fails: its error gate holds, and the page opens the run at that node.
  await until(() => page.evaluate((id) => window.mindgate.store.runId === id, runs.held), { what: 'the held run opened by its new gate' });
  assert.ok((await page.evaluate(() => location.hash)).startsWith(`#/run/${encodeURIComponent(runs.held)}`));
  assert.deepEqual(errors, []);
  // This page stays open to the end: a person watches the held run (an unwatched default hold may be released).
  watcher = context;
  runs.agent = agent;
});

/** Every figure of run `id`, read from the HTTP API, the graph, the report and MCP. */
async function figuresOf(id) {
  const listed = (await get('/api/runs?limit=200')).runs.find((r) => r.id === id);
  const detail = await get(`/api/runs/${encodeURIComponent(id)}`);
  const graph = await get(`/api/runs/${encodeURIComponent(id)}/graph`);
  const report = await get(`/api/runs/${encodeURIComponent(id)}/report`);
  const mcp = await mcpGetRun(id);
  // `mindgate runs --json` reads the same database (read-only) beside the server.
  const cli = JSON.parse(execFileSync(BIN, ['runs', '--json', '--limit', '200', '--db', path.join(srv.home, 'mindgate.db')], { encoding: 'utf8' }))
    .find((r) => r.id === id);
  return { listed, detail, graph, report, mcp, cli };
}

/** The figures the page shows for run `id`: the run bar's and the run list row's. */
async function pageFigures(page, id) {
  await page.evaluate((runId) => { location.hash = `#/run/${encodeURIComponent(runId)}`; }, id);
  await until(() => page.evaluate((runId) => window.mindgate.store.runId === runId && !window.mindgate.store.loading
    && !!document.querySelector('[data-testid="run-figures"] [data-figure="events"]'), id), { what: `run ${id} open` });
  return page.evaluate(() => {
    const bar = {};
    for (const e of document.querySelectorAll('[data-testid="run-figures"] [data-figure]')) bar[e.dataset.figure] = { value: e.dataset.value, text: e.textContent };
    const row = document.querySelector('.run-row.selected .run-line3');
    const line2 = document.querySelector('.run-row.selected .run-line2');
    return { bar, row: row ? row.textContent : null, line2: line2 ? line2.textContent : '', times: { ...window.mindgate.store.model.times } };
  });
}

test('every figure agrees on every surface, over the demo, a real agent, an OTLP trace, a held and an aborted run', async () => {
  // The corpus: the aborted demo run, the held real-agent run, a finished real-agent run, an OTLP trace.
  const ok = runAgent(srv.port, { AGENT_RUN_NAME: 'ok-trip' });
  await ok.waitFor('RUN-END ok');
  runs.ok = /RUN-ID (\S+)/.exec(ok.output())?.[1] || (await get('/api/runs?limit=200')).runs.find((r) => r.name === 'ok-trip').id;
  runs.otlp = await sendTrace();
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs/${runs.otlp}`, { headers: { Authorization: `Bearer ${srv.token}` } });
    return res.ok && (await res.json()).status === 'ok';
  }, { what: 'the OTLP run finished' });
  const { page, context, errors } = await openPage(browser, srv.url());
  for (const [label, id] of Object.entries({ demo: runs.demo, held: runs.held, ok: runs.ok, otlp: runs.otlp })) {
    const { listed, detail, graph, report, mcp, cli } = await figuresOf(id);
    const shown = await pageFigures(page, id);
    const at = `${label} (${id})`;
    const c = listed.counts;
    // events: the run's stored events, never the connection's sequence number.
    assert.deepEqual(detail.counts, c, `${at}: list and detail counts`);
    assert.deepEqual(mcp.value.run.counts, c, `${at}: MCP get_run counts`);
    assert.ok(cli, `${at}: listed by mindgate runs`);
    assert.deepEqual(cli.counts, c, `${at}: mindgate runs counts`);
    assert.deepEqual(cli.usage, listed.usage, `${at}: mindgate runs tokens`);
    assert.deepEqual(cli.cost, listed.cost, `${at}: mindgate runs cost`);
    assert.equal(Number(shown.bar.events.value), c.events, `${at}: run bar events`);
    assert.match(shown.row, new RegExp(`^${c.events} events? · `), `${at}: run list row ${shown.row}`);
    // nodes: the graph draws the nodes that ran plus the announced ones, counted apart.
    const announced = graph.nodes.filter((n) => n.status === 'hinted' || n.status === 'pending').length;
    assert.equal(graph.nodes.length - announced, c.nodes, `${at}: graph nodes that ran`);
    assert.equal(mcp.value.graph.nodeCount - mcp.value.graph.announcedOnlyCount, c.nodes, `${at}: MCP graph nodes`);
    assert.equal(Number(shown.bar.nodes.value), c.nodes, `${at}: run bar nodes`);
    assert.match(shown.row, new RegExp(` ${c.nodes} nodes?`), `${at}: run list row nodes`);
    assert.match(mcp.text, new RegExp(`Graph \\(${c.nodes} nodes?${announced ? ` and ${announced} announced but not run` : ''}, `), `${at}: MCP text`);
    // instances: the executions of the graph.
    const instances = graph.nodes.reduce((n, x) => n + x.instances.length, 0);
    assert.equal(mcp.value.graph.instanceCount, instances, `${at}: MCP instances`);
    assert.equal(Number(shown.bar.instances.value), instances, `${at}: run bar instances`);
    // errors
    assert.equal(report.errorCount, c.errors, `${at}: report errors`);
    assert.equal(mcp.value.errorCount, c.errors, `${at}: MCP errors`);
    assert.equal(shown.bar.errors ? Number(shown.bar.errors.value) : 0, c.errors, `${at}: run bar errors`);
    // tokens and cost
    const tokens = listed.usage.inputTokens + listed.usage.outputTokens;
    assert.equal(report.tokens.inputTokens + report.tokens.outputTokens, tokens, `${at}: report tokens`);
    assert.equal(mcp.value.tokens.inputTokens + mcp.value.tokens.outputTokens, tokens, `${at}: MCP tokens`);
    assert.equal(shown.bar.tokens ? Number(shown.bar.tokens.value) : 0, tokens, `${at}: run bar tokens`);
    assert.deepEqual(report.tokens.cost, listed.cost, `${at}: report cost`);
    assert.deepEqual(mcp.value.tokens.cost, listed.cost, `${at}: MCP cost`);
    assert.deepEqual(detail.cost, listed.cost, `${at}: detail cost`);
    if (listed.cost.usd === null) {
      assert.equal(shown.bar.cost.text, 'unpriced', `${at}: one short badge`);
      assert.match(await page.locator('.run-row.selected [data-testid="run-cost"]').getAttribute('title'), /unpriced: model .*no price is known/);
      assert.equal(await page.locator('.run-row.selected [data-testid="run-cost"]').textContent(), 'unpriced');
    }
    // held time and work time: the projection's, on the graph, the report, MCP and the page.
    assert.equal(report.heldMs, graph.heldMs, `${at}: report held time`);
    assert.equal(report.workMs ?? null, graph.workMs ?? null, `${at}: report work time`);
    assert.deepEqual({ heldMs: mcp.value.heldMs, workMs: mcp.value.workMs ?? null }, { heldMs: graph.heldMs, workMs: graph.workMs ?? null }, `${at}: MCP times`);
    assert.deepEqual(shown.times, { heldMs: graph.heldMs, workMs: graph.workMs ?? null }, `${at}: the page's times`);
    if (listed.status !== 'running') assert.ok(graph.workMs <= listed.durationMs, `${at}: work time within the duration`);
    // The run row's held and work time: the same sum, on the list, the detail, MCP, the CLI and the page.
    assert.equal(listed.heldMs, graph.heldMs, `${at}: run list held time`);
    for (const [where, run] of [['detail', detail], ['MCP', mcp.value.run], ['mindgate runs', cli]]) {
      assert.equal(run.heldMs, listed.heldMs, `${at}: ${where} held time`);
    }
    if (listed.status !== 'running') {
      assert.equal(listed.workMs, graph.workMs, `${at}: run list work time`);
      for (const [where, run] of [['detail', detail], ['MCP', mcp.value.run], ['mindgate runs', cli]]) {
        assert.equal(run.workMs, listed.workMs, `${at}: ${where} work time`);
      }
      assert.equal(Number(shown.bar.work.value), listed.workMs, `${at}: run bar work time`);
    }
    if (listed.heldMs > 0) assert.ok(shown.line2.includes('(held '), `${at}: the list row shows the held time: ${shown.line2}`);
    // duration: an ended run's is fixed and the same everywhere.
    if (listed.status !== 'running') {
      assert.equal(detail.durationMs, listed.finishedAt - listed.startedAt, `${at}: duration`);
      assert.equal(mcp.value.run.durationMs, detail.durationMs, `${at}: MCP duration`);
      assert.equal(cli.durationMs, detail.durationMs, `${at}: mindgate runs duration`);
    }
    if (label === 'held') await page.screenshot({ path: shot('run-numbers-light.png') });
  }
  // Compare counts the same nodes and the same ended duration as the run list.
  const diff = await get(`/api/diff?a=${encodeURIComponent(runs.demo)}&b=${encodeURIComponent(runs.ok)}`);
  for (const [side, id] of [[diff.a, runs.demo], [diff.b, runs.ok]]) {
    const listed = (await get(`/api/runs/${encodeURIComponent(id)}`));
    assert.equal(side.nodes, listed.counts.nodes, `diff nodes of ${id}`);
    assert.equal(side.durationMs, listed.durationMs, `diff duration of ${id}`);
    assert.deepEqual(side.cost, listed.cost, `diff cost of ${id}`);
  }
  // The held run is running: its duration grows on the API and ticks in the list.
  await pageFigures(page, runs.held);
  const before = (await get(`/api/runs/${encodeURIComponent(runs.held)}`)).durationMs;
  const line = page.locator('.run-row.selected .run-line2');
  const shownBefore = await line.textContent();
  assert.match(shownBefore, /^\d/, 'the duration comes first in the row');
  await until(async () => (await line.textContent()) !== shownBefore, { what: 'the held run duration ticking in the list', timeout: 5000 });
  await until(async () => (await get(`/api/runs/${encodeURIComponent(runs.held)}`)).durationMs > before, { what: 'the held run duration growing on the API', timeout: 5000 });
  await page.locator('#theme-toggle').click();
  await until(() => page.evaluate(() => document.documentElement.dataset.theme === 'dark'), { what: 'the dark theme' });
  await page.screenshot({ path: shot('run-numbers-dark.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('Compare fits at 1280×800 and 1440×900, durations never wrap, pickers search, unpriced is one badge', async () => {
  for (const [width, height] of [[1280, 800], [1440, 900]]) {
    for (const scheme of ['light', 'dark']) {
      const { page, context, errors } = await openPage(browser, srv.url(`#/diff/${encodeURIComponent(runs.demo)}/${encodeURIComponent(runs.held)}`), { width, height, colorScheme: scheme });
      const table = page.locator('[data-testid="diff-table"]');
      await table.waitFor();
      const fit = await page.evaluate(() => {
        const wrap = document.querySelector('.diff-table-wrap');
        const t = document.querySelector('[data-testid="diff-table"]').getBoundingClientRect();
        const detail = document.querySelector('[data-testid="diff-detail"]').getBoundingClientRect();
        // A value wraps when one of its text nodes spans more than one line.
        const wraps = (td) => {
          const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
          for (let t = walker.nextNode(); t; t = walker.nextNode()) {
            const r = document.createRange();
            r.selectNodeContents(t);
            if (new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1) return true;
          }
          return false;
        };
        const wrapped = [...document.querySelectorAll('.diff-table td.num')].filter(wraps).map((td) => td.textContent);
        return { scroll: wrap.scrollWidth, client: wrap.clientWidth, tableRight: t.right, detailLeft: detail.left, detailTop: detail.top, tableBottom: t.bottom, wrapped };
      });
      assert.ok(fit.scroll <= fit.client, `${width}×${height}: the table's columns fit (${fit.scroll} > ${fit.client})`);
      assert.ok(fit.tableRight <= fit.detailLeft + 1, `${width}×${height}: the table stays left of the detail pane (${fit.tableRight} > ${fit.detailLeft})`);
      assert.deepEqual(fit.wrapped, [], `${width}×${height}: no cell wraps mid-value`);
      // The demo used tokens with no model name: one short badge per cost cell, the detail on hover.
      const badges = page.locator('.diff-table .badge.unpriced');
      assert.ok(await badges.count() > 0);
      assert.equal(await badges.first().textContent(), 'unpriced');
      assert.match(await badges.first().getAttribute('title'), /unpriced: model \(no model name\)/);
      await page.screenshot({ path: shot(`compare-${width}x${height}-${scheme}.png`) });
      assert.deepEqual(errors, []);
      await context.close();
    }
  }
  // The pickers find a run by id prefix, by name and by time, then compare.
  const { page, context } = await openPage(browser, srv.url('#/diff'));
  const a = page.locator('input[aria-label="Run A"]');
  await until(() => page.evaluate(() => !!document.querySelector('input[aria-label="Run A"]')), { what: 'the pickers' });
  await a.fill(runs.ok.slice(0, 8));
  await until(async () => (await page.locator('.run-picker-option').evaluateAll((o) => o.map((x) => x.dataset.run))).join() === runs.ok, { what: 'the id prefix finding one run' });
  await a.press('Enter');
  const b = page.locator('input[aria-label="Run B"]');
  await b.fill('held-trip');
  await until(async () => (await page.locator('.run-picker-list:not([hidden]) .run-picker-option').evaluateAll((o) => o.map((x) => x.dataset.run))).join() === runs.held, { what: 'the name finding one run' });
  await page.screenshot({ path: shot('compare-picker-light.png') });
  await b.press('Enter');
  await until(() => page.evaluate(() => location.hash), { what: 'the diff opened' });
  await until(async () => (await page.evaluate(() => location.hash)) === `#/diff/${encodeURIComponent(runs.ok)}/${encodeURIComponent(runs.held)}`, { what: 'the picked diff' });
  // By start time: the time the list shows.
  const time = await page.evaluate((id) => {
    const r = window.mindgate.store.runs.get(id);
    return new Date(r.startedAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }, runs.otlp);
  await a.fill(time);
  await until(async () => (await page.locator('.run-picker-list:not([hidden]) .run-picker-option').evaluateAll((o) => o.map((x) => x.dataset.run))).includes(runs.otlp), { what: 'the time finding the run' });
  await context.close();
});

test('memory: the Facts tab counts active facts and the list says what it lists, in English', async () => {
  const remember = async (fact) => {
    const res = await post('/api/memory/facts', { userId: 'ada', ...fact });
    assert.equal(res.status, 201, await res.text());
  };
  await remember({ text: 'Ada prefers window seats' });
  await remember({ text: 'Ada flies from Lisbon' });
  await remember({ text: 'Ada is allergic to peanuts', provenance: 'extraction' }); // quarantined
  const { page, context, errors } = await openPage(browser, srv.url('#/memory'));
  const info = page.locator('.mem-list-info');
  await until(async () => /^3 facts of any status · 2 active \(the tab's count\)$/.test(await info.textContent()), { what: 'the facts list count beside the tab count' });
  assert.equal(await page.locator('#mem-tab-semantic').getAttribute('data-count'), '2');
  await page.locator('#mem-tab-quarantine').click();
  await until(async () => (await info.textContent()) === '1 quarantined record waiting for review', { what: 'the quarantine count in English' });
  await page.screenshot({ path: shot('memory-counts-light.png') });
  assert.deepEqual(errors, []);
  await context.close();
});
