// Figures of the TypeScript SDK (printed as a table; the SDK README quotes them):
//   detached gate, emit, attached gate with no matching breakpoint (CPU ns/µs per call),
//   release of a held gate when the viewer's socket goes (ms). The overhead on the 100-step
//   mock generateText loop is bench/loop.mjs's (`npm run bench:loop`).
// `npm run bench` (`node --expose-gc bench/bench.mjs`, after `npm ci`); the attached figures need the mindgate binary
// (MINDGATE_BIN, default ../../target/debug/mindgate) and are skipped without it.
import { performance } from 'node:perf_hooks';
import { WebSocketServer } from 'ws';
import { Session } from '../dist/index.js';
import { missingBinary, startServer, until } from '../test/support.mjs';

const NODE = { nodeId: 'tool:search', kind: 'tool', name: 'search' };
const HOLD = { runId: 'run_bench' };
const rows = [];
const record = (what, value, unit, note = '') => {
  rows.push({ what, value, unit, note });
  console.log(`${what.padEnd(58)} ${String(value).padStart(10)} ${unit} ${note}`);
};
/** CPU µs since `c0` (user + system): steadier than wall time on a shared machine. */
const cpuMicros = (c0) => ((c) => c.user + c.system)(process.cpuUsage(c0));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function gateCost(session, n) {
  for (let i = 0; i < 10_000; i++) await session.gate('before', NODE, HOLD); // warm-up
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await session.gate('before', NODE, HOLD);
  return cpuMicros(c0) * 1e3 / n; // CPU ns per awaited gate
}

/** µs per emit of a `node.token` as the SDK sends one (a payload of its own: serialised when sent or replayed). */
function tokenEmitCost(session, n) {
  const emit = () => session.emitOwned('run_bench', 'node.token', { nodeId: 'llm:step', instanceId: 'run_bench:s1', deltas: [{ t: 'text', v: 'hello world' }] });
  for (let i = 0; i < 10_000; i++) emit();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) emit();
  return cpuMicros(c0) / n;
}

/** µs per emit of a `node.finished` carrying the host's output (serialised at once: the host may change it later). */
function finishedEmitCost(session, n) {
  const output = { hits: ['a result of the search tool'], total: 1 };
  const emit = () => session.emitTo('run_bench', 'node.finished', { nodeId: 'tool:search', instanceId: 'call_1', durationMs: 0.42, status: 'ok', output });
  for (let i = 0; i < 10_000; i++) emit();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) emit();
  return cpuMicros(c0) / n;
}

/** A viewer of our own that arms `{}` (hold before everything) and drops the socket at each hold. */
async function releaseLatency(reps) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.on('listening', r));
  let dropAt = 0;
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const env = JSON.parse(data.toString());
      if (env.type === 'hello') {
        ws.send(JSON.stringify({ gm: 1, seq: 0, ts: Date.now(), runId: '*', type: 'hello.ack', payload: { versions: { protocol: 1, viewer: 'bench' }, capabilities: [], breakpoints: [{}], mode: 'run' } }));
      } else if (env.type === 'exec.paused') {
        dropAt = performance.now();
        ws.terminate();
      }
    });
  });
  const url = `ws://127.0.0.1:${wss.address().port}/ingest`;
  const samples = [];
  for (let i = 0; i < reps; i++) {
    const s = new Session({ url, env: {}, timing: { retryMinMs: 5, retryMaxMs: 20 } });
    await s.ready(2000);
    await s.gate('before', NODE, { runId: 'run_bench' });
    samples.push(performance.now() - dropAt);
    await s.dispose(0);
  }
  await new Promise((r) => wss.close(r));
  return samples;
}

/** µs per `node.token` emit attached, the sending (next turn of the event loop) included. */
async function attachedEmitCost(session, n) {
  const sent = () => until(() => session.stats().socketBuffered === 0 && session.stats().attached, { what: 'the socket drained', interval: 1 });
  const burst = async (count) => {
    for (let i = 0; i < count; i += 1000) {
      for (let j = i; j < Math.min(count, i + 1000); j++) session.emitOwned('run_bench', 'node.token', { nodeId: 'llm:step', instanceId: 'run_bench:s1', deltas: [{ t: 'text', v: 'hello world' }] });
      await new Promise((r) => setImmediate(r)); // the batch is written on this turn
    }
  };
  await burst(10_000);
  await sent();
  const c0 = process.cpuUsage();
  await burst(n);
  const c = process.cpuUsage(c0);
  await sent();
  return ((c.user + c.system) / n).toFixed(2);
}

const detached = new Session({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {} });
detached.emitTo('run_bench', 'custom', {}); // starts the transport: enabled, never attached
record('detached gate (awaited, shared resolved promise), CPU', (await gateCost(detached, 1_000_000)).toFixed(0), 'ns/call');
record('emit node.token, detached (ring slot), CPU', tokenEmitCost(detached, 200_000).toFixed(2), 'µs/call');
record('emit node.finished + output, detached (serialised), CPU', finishedEmitCost(detached, 200_000).toFixed(2), 'µs/call');
const rel = await releaseLatency(20);
record('release of a held gate after the socket drops (p50)', median(rel).toFixed(3), 'ms', `max ${Math.max(...rel).toFixed(3)} ms, 20 drops`);

const skip = missingBinary();
if (skip) {
  console.log(`attached figures ${skip}`);
} else {
  const srv = await startServer();
  try {
    await srv.api('/api/breakpoints', { method: 'POST', body: { kind: 'tool', name: 'never-called' } });
    // Written on every turn (flushIntervalMs 0), as the bursts below expect: each burst's write is measured with it.
    const attached = new Session({ url: srv.ingest, env: {}, app: 'bench', timing: { flushIntervalMs: 0 } });
    await attached.ready(5000);
    record('attached gate, no matching breakpoint, CPU', (await gateCost(attached, 1_000_000)).toFixed(0), 'ns/call');
    record('emit node.token, attached (sending included), CPU', await attachedEmitCost(attached, 100_000), 'µs/call');
    await until(() => attached.stats().attached, { what: 'still attached' });
    await attached.dispose();
  } finally {
    await srv.stop();
  }
}
await detached.dispose(0);
