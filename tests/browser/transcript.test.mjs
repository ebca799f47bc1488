// End-to-end: model calls read as conversations (docs/transcripts.md). A graphmind-ai
// agent on its OpenAI integration (against a stand-in OpenAI endpoint on loopback) and an
// agent traced with the OpenTelemetry SDK's OTLP exporter each show, in the inspector, the
// system / user / assistant / tool messages with the tool call and its result, the model,
// finish reason and usage; the LLM box reads its model instead of `step`; "Raw JSON"
// shows the input and output trees. Screenshots at 1440×900, light and dark. Also times a
// 200-message, 1 MB transcript's render (printed, never asserted) and checks that long text
// folds with a "Show all" that shows every character.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startServer, launchBrowser, openPage, runAgent, until, artifact, PYTHON, ROOT } from './lib/harness.mjs';

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

async function api(p) {
  const res = await fetch(`${srv.base}${p}`, { headers: { Authorization: `Bearer ${srv.token}` } });
  assert.equal(res.status, 200, `${p}: ${res.status}`);
  return res.json();
}

/** The conversation the inspector shows: one `role: text` line per message block. */
async function conversation(page) {
  return page.evaluate(() => [...document.querySelectorAll('.insp-convo .tx-msg')].map((m) => m.innerText.replace(/\s+/g, ' ').trim()));
}

async function shoot(runId, nodeId, name) {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(runId)}/node/${encodeURIComponent(nodeId)}`), { colorScheme });
    await until(async () => (await conversation(page)).length > 0, { what: `the conversation (${colorScheme})` });
    // The inspector scrolled to the tool call and its result.
    await page.evaluate(() => document.querySelector('.insp-convo .tx-call').scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: artifact(`transcript-${name}-${colorScheme}.png`) });
    assert.deepEqual(errors, []);
    await context.close();
  }
}

test('a graphmind-ai agent on its OpenAI integration reads as a conversation with its tool call', async () => {
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'chat-run' }, 'chat_agent.py');
  try {
    await agent.waitFor('RUN-END', 30000); // printed once the client flushed its frames
    await until(() => agent.child.exitCode !== null, { what: 'the agent to exit' });
    assert.equal(agent.child.exitCode, 0, agent.output());
  } finally {
    agent.kill();
  }
  const run = await until(async () => (await api('/api/runs?q=chat-run')).runs.find((r) => r.status === 'ok'), { what: 'the finished chat run' });
  const detail = await api(`/api/runs/${encodeURIComponent(run.id)}/nodes/llm%3Astep`);
  assert.equal(detail.label, 'gpt-4o-mini', 'the model the integration names (its usage names none)');
  assert.equal(detail.instances.length, 2);
  const second = detail.instances[1].transcript;
  assert.deepEqual(second.messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'assistant']);
  assert.deepEqual(second.messages[2].parts[0], { type: 'tool_call', id: 'call_weather_1', name: 'get_weather', arguments: { city: 'Oslo', unit: 'C' } });

  const { page, context, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(run.id)}`));
  // The LLM box reads its model, not `step`.
  await until(async () => (await page.evaluate(() => window.mindgate.boxes())).some((b) => b.nodeId === 'llm:step' && b.label === 'gpt-4o-mini'), { what: 'the llm box labelled by its model' });
  await page.evaluate(() => window.mindgate.store.selectNode('llm:step'));
  await until(async () => (await conversation(page)).length === 5, { what: 'the second call as five messages' });
  const lines = await conversation(page);
  assert.match(lines[0], /^System You are a travel assistant/i);
  assert.match(lines[1], /^User What is the weather in Oslo today\?/i);
  assert.match(lines[2], /^Assistant Tool call get_weather call_weather_1 \{ "city": "Oslo", "unit": "C" \}/i);
  assert.match(lines[3], /^Tool Result of get_weather call_weather_1 \{ "city": "Oslo", "forecast": "sunny"/i);
  assert.match(lines[4], /^Assistant It is sunny and 18 °C in Oslo/i);
  // Whitespace kept: the answer's indented line is in the text as sent.
  const answer = await page.evaluate(() => [...document.querySelectorAll('.insp-convo .tx-msg')].at(-1).querySelector('.tx-text').textContent);
  assert.equal(answer, 'It is sunny and 18 °C in Oslo.\n\n    a fine day for a walk by the fjord');
  const head = await page.evaluate(() => document.querySelector('.insp-convo .tx-head').innerText);
  assert.match(head, /gpt-4o-mini/);
  assert.match(head, /stop/);
  assert.match(head, /40 in · 12 out/);
  // The tool result links to the tool node that produced it.
  await page.evaluate(() => [...document.querySelectorAll('.insp-convo .tx-result .link-btn')][0].click());
  await until(async () => page.evaluate(() => window.mindgate.store.nodeId === 'tool:get_weather'), { what: 'the tool node selected from its result' });
  // Raw JSON keeps today's tree.
  await page.evaluate(() => window.mindgate.store.selectNode('llm:step'));
  await until(async () => (await conversation(page)).length === 5, { what: 'the conversation again' });
  await page.evaluate(() => document.querySelector('.tx-raw').click());
  await until(async () => page.evaluate(() => document.querySelector('.insp-convo .tx-msg') === null
    && [...document.querySelectorAll('.insp-block')].some((b) => !b.hidden && b.querySelector('h3')?.textContent === 'Output')), { what: 'the raw JSON trees' });
  assert.deepEqual(errors, []);
  await context.close();
  await shoot(run.id, 'llm:step', 'graphmind-openai');
});

test('an OpenTelemetry-instrumented agent reads as a conversation with its tool call', async (t) => {
  const child = spawn(PYTHON, [path.join(ROOT, 'tests/browser/agents/otel_chat_agent.py')], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: srv.base, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (out.includes('SKIPPED')) {
    console.log(`skipped: ${out.trim()}`);
    t.skip(out.trim());
    return;
  }
  assert.equal(code, 0, out);
  const run = await until(async () => (await api('/api/runs?q=otel-chat-agent')).runs[0], { what: 'the OTel run' });
  const llm = await until(async () => {
    const graph = await api(`/api/runs/${encodeURIComponent(run.id)}/graph`);
    return graph.nodes.find((n) => n.kind === 'llm' && n.instances.length);
  }, { what: 'the chat span as an llm node' });
  const { page, context, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(run.id)}/node/${encodeURIComponent(llm.nodeId)}`));
  await until(async () => (await conversation(page)).length === 5, { what: 'the OTel chat span as five messages' });
  const lines = await conversation(page);
  assert.match(lines[0], /^System You are a hotel concierge\./i);
  assert.match(lines[1], /^User Find me a hotel near the fjord in Oslo\./i);
  assert.match(lines[2], /^Assistant Tool call find_hotels call_hotels_1 \{ "city": "Oslo", "near": "fjord" \}/i);
  assert.match(lines[3], /^Tool Result of find_hotels call_hotels_1 Fjord Hotel \(4\.6\)/i);
  assert.match(lines[4], /^Assistant The Fjord Hotel is rated 4\.6/i);
  const head = await page.evaluate(() => document.querySelector('.insp-convo .tx-head').innerText);
  assert.match(head, /gpt-4o-mini-2024-07-18/);
  assert.match(head, /64 in · 14 out/);
  // The result links to the execute_tool span that answered call_hotels_1 (its gen_ai.tool.call.id).
  const tool = (await api(`/api/runs/${encodeURIComponent(run.id)}/graph`)).nodes.find((n) => n.kind === 'tool');
  assert.equal(tool.instances[0].toolCallId, 'call_hotels_1');
  await page.evaluate(() => document.querySelector('.insp-convo .tx-result .link-btn').click());
  await until(async () => page.evaluate(() => [window.mindgate.store.nodeId, window.mindgate.store.instanceId]).then(([n, i]) => n === tool.nodeId && i === tool.instances[0].instanceId),
    { what: 'the tool span that answered the call selected' });
  assert.deepEqual(errors, []);
  await context.close();
  await shoot(run.id, llm.nodeId, 'otel');
});

test('a 200-message, 1 MB transcript renders (time printed, not asserted); long text folds, Show all shows it whole', async () => {
  const { page, context, errors } = await openPage(browser, srv.url());
  const ms = await page.evaluate(async () => {
    const { TranscriptView } = await import('/js/transcript.js');
    const text = 'word '.repeat(1000);
    const messages = [];
    for (let i = 0; i < 200; i++) {
      const role = ['user', 'assistant', 'tool'][i % 3];
      const parts = role === 'tool'
        ? [{ type: 'tool_call_response', id: `c${i}`, response: { rows: text } }]
        : [{ type: 'text', content: text }, ...(role === 'assistant' ? [{ type: 'tool_call', id: `c${i + 1}`, name: 'search', arguments: { q: 'oslo', page: i } }] : [])];
      messages.push({ role, parts });
    }
    const t = { messages, model: 'gpt-4o-mini', finishReason: 'stop', usage: { inputTokens: 250000, outputTokens: 900 }, inputCount: 199 };
    const host = document.createElement('div');
    host.style.width = '360px';
    document.body.append(host);
    const view = new TranscriptView(host, { toolTarget: () => null, onOpen: () => {} });
    const runs = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      view.set({ ...t }, null);
      host.getBoundingClientRect();
      document.body.offsetHeight; // layout included
      runs.push(performance.now() - t0);
    }
    const bytes = JSON.stringify(t).length;
    // A long text folds, and "Show all" shows every character (never silently cut).
    const fold = host.querySelector('.tx-fold');
    const shown = fold.querySelector('.tx-text').textContent.length;
    fold.querySelector('.tx-more').click();
    const all = fold.querySelector('.tx-text').textContent;
    host.remove();
    return { runs, bytes, folded: shown, full: all === text };
  });
  assert.ok(ms.folded > 0 && ms.folded < 5000, `folded to ${ms.folded} characters`);
  assert.equal(ms.full, true, '"Show all" shows the whole text');
  const sorted = [...ms.runs].sort((a, b) => a - b);
  console.log(`transcript render: 200 messages, ${(ms.bytes / 1e6).toFixed(2)} MB: median ${sorted[2].toFixed(1)} ms, max ${sorted[4].toFixed(1)} ms (5 renders, layout included)`);
  assert.deepEqual(errors, []);
  await context.close();
});
