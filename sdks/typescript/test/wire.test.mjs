// The wire writer: the envelope text written without building the envelope object is the text
// `JSON.stringify` makes of it; frames go unmasked only to hosts on the loopback interface.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envelopeText } from '../dist/protocol.js';
import { isLoopback } from '../dist/transport.js';

test('envelopeText is JSON.stringify of the envelope, key order included', () => {
  const payloads = [
    { nodeId: 'llm:step', instanceId: 'run_1:s1', deltas: [{ t: 'text', v: 'héllo "quoted" \u2028 \\ back' }] },
    { nodes: [] },
    {},
    { toJSON: () => ({ custom: true }) },
    { when: new Date(0), nested: { a: [1, null, 'x'] } },
    null,
  ];
  for (const payload of payloads) {
    for (const runId of ['run_abc', '*', 'odd "id"']) {
      assert.equal(envelopeText(7, 1700000000123, runId, 'node.token', payload), JSON.stringify({ gm: 1, seq: 7, ts: 1700000000123, runId, type: 'node.token', payload }));
    }
  }
  // No payload: the key is left out, as JSON.stringify leaves it out.
  assert.equal(envelopeText(1, 2, 'r', 'x', undefined), JSON.stringify({ gm: 1, seq: 1, ts: 2, runId: 'r', type: 'x', payload: undefined }));
});

test('only loopback URLs are sent unmasked', () => {
  for (const url of ['ws://127.0.0.1:4747/ingest', 'ws://localhost:4747/ingest', 'ws://[::1]:4747/ingest', 'ws://127.0.0.1:4747/ingest?token=t']) {
    assert.equal(isLoopback(url), true, url);
  }
  for (const url of ['ws://10.0.0.2:4747/ingest', 'wss://viewer.example.com/ingest', 'ws://127.0.0.1.example.com/ingest', 'not a url']) {
    assert.equal(isLoopback(url), false, url);
  }
});
