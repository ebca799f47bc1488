// Test support: the real `mindgate serve` on a free loopback port with a temporary home,
// its HTTP API, and bounded waits on observable conditions.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../../..');
export const BIN = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');

/** The reason the suites cannot run here, or null. */
export function missingBinary() {
  return existsSync(BIN) ? null : `skipped: mindgate binary not found at ${BIN} (cargo build -p mindgate-cli, or set MINDGATE_BIN)`;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const tick = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; throws after `timeout` ms naming `what`. */
export async function until(fn, { timeout = 15000, interval = 20, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await tick(interval);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

/**
 * Starts `mindgate serve`; `{port, home}` reuse a port and a home (a restart). Resolves once
 * `/health` answers. `--hold-unwatched` by default: gates stay held while the test decides.
 */
export async function startServer({ port, home, holdUnwatched = true, extraArgs = [] } = {}) {
  home = home || mkdtempSync(path.join(tmpdir(), 'mindgate-tssdk-'));
  port = port || (await freePort());
  const args = ['serve', '--port', String(port), '--otlp-port', '0', '--no-open', '--db', path.join(home, 'mindgate.db')];
  if (holdUnwatched) args.push('--hold-unwatched');
  args.push(...extraArgs);
  const child = spawn(BIN, args, { env: { ...process.env, MINDGATE_HOME: home, MINDGATE_LOG: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const info = path.join(home, 'run', `serve-${port}.json`);
  const base = `http://127.0.0.1:${port}`;
  const token = await until(async () => {
    if (child.exitCode !== null) throw new Error(`mindgate serve exited (${child.exitCode}):\n${out}`);
    if (!existsSync(info)) return null;
    let t;
    try {
      t = JSON.parse(readFileSync(info, 'utf8')).token;
    } catch {
      return null;
    }
    try {
      return (await fetch(`${base}/health`, { headers: { Authorization: `Bearer ${t}` } })).ok ? t : null;
    } catch {
      return null;
    }
  }, { timeout: 20000, what: 'mindgate serve to answer /health' });
  const exited = new Promise((r) => child.on('exit', r));
  const server = {
    port, home, base, token, child,
    ingest: `ws://127.0.0.1:${port}/ingest`,
    logs: () => out,
    /** JSON of a request with the control token; throws on a non-2xx answer. */
    async api(route, { method = 'GET', body } = {}) {
      const res = await fetch(`${base}${route}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw Object.assign(new Error(`${method} ${route}: ${res.status} ${text}`), { status: res.status });
      return JSON.parse(text);
    },
    /** SIGKILL, resolved once the process is gone. */
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
    /** SIGTERM (then SIGKILL), and the home removed unless `keepHome`. */
    async stop({ keepHome = false } = {}) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
      if (!keepHome) rmSync(home, { recursive: true, force: true });
    },
  };
  return server;
}

/** The first pause listed (long-polls the server up to `waitS` seconds per request). */
export async function nextPause(server, what = 'a held gate') {
  return until(async () => (await server.api('/api/pauses?wait=5')).pauses[0], { timeout: 20000, what });
}

/** Resumes a pause over HTTP; returns the server's result word. */
export async function resume(server, pause, body) {
  const res = await server.api(`/api/runs/${pause.runId}/pauses/${pause.pauseId}/resume`, { method: 'POST', body });
  return res.result;
}

/** The run `runId` as `GET /api/runs` lists it. */
export async function runRow(server, runId) {
  const { runs } = await server.api('/api/runs?limit=200');
  return runs.find((r) => r.id === runId || r.runId === runId);
}

/** Every stored event of a run (none while the run is not stored yet). */
export async function events(server, runId) {
  try {
    return await eventPages(server, runId);
  } catch (error) {
    if (error.status === 404) return [];
    throw error;
  }
}

async function eventPages(server, runId) {
  const out = [];
  let after = null;
  for (let page = 0; page < 100; page++) {
    const query = after === null ? 'limit=5000' : `afterSeq=${after}&limit=5000`;
    const res = await server.api(`/api/runs/${runId}/events?${query}`);
    out.push(...res.events);
    if (!res.events.length || res.nextAfterSeq == null || res.nextAfterSeq === after) break;
    after = res.nextAfterSeq;
  }
  return out;
}
