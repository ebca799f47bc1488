// A viewer slower than the app: the real `mindgate serve`, stopped with SIGSTOP while the app
// streams, takes nothing; the SDK keeps what it wrote to the socket under its bound, drops
// the oldest unsent events from the ring buffer and counts them, never grows without bound,
// and once the server runs again sends the rest: every event the SDK did not count as dropped
// is stored, in order, the run's end included.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { run, Session } from '../dist/index.js';
import { events, missingBinary, startServer, until } from './support.mjs';

const skip = missingBinary() || false;
if (skip) console.log(skip);
const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const SEND_BUFFER = 64 * 1024;
const RING = 500;
const TEXT = 'x'.repeat(4096);
const turn = () => new Promise((r) => setImmediate(r));

test('a stopped server: the socket buffer stays bounded, the oldest unsent events are dropped and counted, the rest arrive', { skip }, async () => {
  const srv = await startServer();
  let stopped = false;
  const cont = () => {
    if (stopped) process.kill(srv.child.pid, 'SIGCONT');
    stopped = false;
  };
  cleanups.push(() => srv.stop());
  cleanups.push(cont);
  // flushIntervalMs 0: events are written on the next turn of the event loop, so each batch
  // below is written (as far as the socket takes it) before the next one is emitted.
  const s = new Session({ url: srv.ingest, app: 'ts-slow-viewer', bufferSize: RING, sendBufferBytes: SEND_BUFFER, timing: { flushIntervalMs: 0 } });
  cleanups.push(() => s.dispose(0));
  assert.equal(await s.ready(5000), true);

  let runId;
  let maxBuffered = 0;
  let flooded = 0;
  await run('flood', async (ctx) => {
    runId = ctx.runId;
    await until(async () => (await events(srv, runId)).length >= 2, { what: 'the run start stored' });
    process.kill(srv.child.pid, 'SIGSTOP');
    stopped = true;
    // Until the ring has dropped unsent events (the kernel's socket buffers fill first), at most 50 MB.
    for (let batch = 0; batch < 120 && s.stats().unsentDropped < 2 * RING; batch++) {
      for (let i = 0; i < 100; i++) {
        s.emit('node.token', { nodeId: 'agent:flood', instanceId: runId, deltas: [{ t: 'text', v: `${flooded} ${TEXT}` }] });
        flooded += 1;
      }
      await turn(); // the transport writes on this turn
      maxBuffered = Math.max(maxBuffered, s.stats().socketBuffered);
    }
  }, { session: s });

  const stats = s.stats();
  assert.ok(stats.unsentDropped >= 2 * RING, `the ring dropped unsent events (${JSON.stringify(stats)}, ${flooded} emitted)`);
  assert.ok(maxBuffered > 0, 'the socket held unsent bytes');
  assert.ok(maxBuffered <= SEND_BUFFER + TEXT.length + 200, `socket buffer ${maxBuffered} B over the ${SEND_BUFFER} B bound plus one frame`);
  assert.ok(stats.buffered <= RING);

  cont();
  const stored = await until(async () => {
    const evs = await events(srv, runId);
    return evs.some((e) => e.type === 'run.finished') && evs;
  }, { timeout: 60000, what: 'the run.finished sent after the server resumed' });
  const seqs = stored.map((e) => e.seq);
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'in order');
  assert.equal(new Set(seqs).size, seqs.length, 'no duplicates');
  // run.started + agent node.started, the flood, agent node.finished + run.finished.
  const emitted = 2 + flooded + 2;
  assert.equal(s.stats().unsentDropped, stats.unsentDropped, 'nothing dropped after the server resumed');
  assert.equal(stored.length, emitted - stats.unsentDropped, 'every event not counted as dropped is stored');
  const tokens = stored.filter((e) => e.type === 'node.token').map((e) => Number(e.payload.deltas[0].v.split(' ')[0]));
  assert.equal(tokens[tokens.length - 1], flooded - 1, 'the newest event arrived');
  assert.equal(s.stats().socketBuffered, 0);
});
