// The protocol types are generated from `mindgate schema`: this fails when the committed
// src/protocol.generated.ts and the binary's schema differ (regenerate with
// `node scripts/gen-protocol.mjs > src/protocol.generated.ts`, with MINDGATE_BIN set).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generate, readSchema } from '../scripts/gen-protocol.mjs';
import { BIN, missingBinary } from './support.mjs';
import { CAPABILITIES, PROTOCOL_VERSION } from '../dist/protocol.js';
import { VERSION } from '../dist/index.js';

const skip = missingBinary() || false;
if (skip) console.log(skip);

test('src/protocol.generated.ts is what `mindgate schema` generates', { skip }, () => {
  const committed = readFileSync(new URL('../src/protocol.generated.ts', import.meta.url), 'utf8');
  const fresh = generate(readSchema(undefined, BIN));
  assert.equal(committed, fresh, 'the wire protocol drifted: regenerate src/protocol.generated.ts and review the change');
});

test('the schema still speaks the protocol and types this SDK sends', { skip }, () => {
  const schema = readSchema(undefined, BIN);
  assert.equal(schema.properties.gm.const, PROTOCOL_VERSION);
  const types = schema.oneOf.map((v) => v.properties.type.const);
  for (const sent of ['hello', 'run.started', 'run.finished', 'graph.hint', 'node.started', 'node.token', 'node.finished', 'node.error', 'exec.paused', 'exec.resumed', 'exec.refused']) {
    assert.ok(types.includes(sent), `${sent} is in the schema`);
  }
  assert.ok(CAPABILITIES.includes('pause'));
});

test('the version the SDK announces is the package version', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(VERSION, pkg.version);
});
