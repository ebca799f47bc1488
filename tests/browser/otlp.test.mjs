// End-to-end: an OpenTelemetry trace sent to `POST /v1/traces` (OTLP/JSON, as exporters
// send it: children first, over several requests) grows live in the viewer — a pending
// placeholder for the parent that has not arrived, then the parent filling it in, the
// tool call and the run finishing — without a reload.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, until } from './lib/harness.mjs';

const TRACE = '5b8efff798038103d269b633813fc60c';
const RUN = `otlp-${TRACE}`;
const ROOT = 'eee19b7ec3c1b174';

let srv;
let browser;

function span(spanId, parentSpanId, name, attrs, offsetMs) {
  const start = BigInt(Date.now() + offsetMs) * 1000000n;
  return {
    traceId: TRACE, spanId, parentSpanId, name, kind: 'SPAN_KIND_INTERNAL',
    startTimeUnixNano: String(start), endTimeUnixNano: String(start + 200000000n),
    attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } })),
  };
}

async function send(spans) {
  const res = await fetch(`${srv.base}/v1/traces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'otel-agent' } }] }, scopeSpans: [{ spans }] }] }),
  });
  assert.equal(res.status, 200, await res.text());
}

before(async () => {
  srv = await startServer({ extraArgs: ['--otlp-port', '0'] });
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

test('an OTel run grows live: placeholder parent, late parent, tool, finished run', async () => {
  await send([span('eee19b7ec3c1b175', ROOT, 'chat gpt-4o', {
    'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 3,
  }, 0)]);
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(RUN)}`));
  const boxes = () => page.evaluate(() => (window.mindgate ? window.mindgate.boxes() : []));
  await until(async () => (await boxes()).some((b) => b.nodeId === 'llm:gpt-4o'), { what: 'the first span drawn' });
  const placeholder = `custom:span-${ROOT}`;
  let drawn = await boxes();
  assert.equal(drawn.find((b) => b.nodeId === placeholder)?.status, 'pending', JSON.stringify(drawn));
  // The parent and a tool arrive later, on the same open page.
  await send([
    span('eee19b7ec3c1b176', ROOT, 'execute_tool search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' }, 300),
    span(ROOT, '', 'invoke_agent planner', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' }, -100),
  ]);
  await until(async () => {
    const b = await boxes();
    const parent = b.find((x) => x.nodeId === placeholder);
    return b.length === 3 && parent?.name === 'planner' && parent?.status === 'ok' && b.some((x) => x.nodeId === 'tool:search');
  }, { what: 'the late parent filling its placeholder, and the tool' });
  drawn = await boxes();
  assert.deepEqual(drawn.map((b) => b.nodeId).sort(), [placeholder, 'llm:gpt-4o', 'tool:search'].sort());
  assert.equal(drawn.find((b) => b.nodeId === placeholder).kind, 'agent');
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs/${RUN}`);
    return res.ok && (await res.json()).status === 'ok';
  }, { what: 'the run finished' });
  assert.deepEqual(errors, []);
});
