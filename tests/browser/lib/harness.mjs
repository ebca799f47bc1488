// Shared set-up for the browser tests: start `mindgate serve` on a free port
// with a temporary MINDGATE_HOME, launch Debian's chromium through
// playwright-core, run the real GraphMind Python agent, collect console errors.

import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../../..');
export const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'browser');
export const PYTHON = process.env.PYTHON || path.join(ROOT, '.venv/bin/python');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const BIN = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');

/**
 * `serve` flags that read the task-graph fixtures of our own (every agent's home under
 * crates/taskgraph/tests/fixtures) and nothing else.
 */
export function fixtureHomeArgs() {
  const fix = path.join(ROOT, 'crates/taskgraph/tests/fixtures');
  return ['--no-default-homes',
    '--dsh-sessions', path.join(fix, 'dsh'), '--pi-sessions', path.join(fix, 'pi'),
    '--claude-projects', path.join(fix, 'claude'), '--codex-sessions', path.join(fix, 'codex'),
    '--gemini-sessions', path.join(fix, 'gemini/tmp'), '--opencode-data', path.join(fix, 'opencode')];
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the server; resolves to { port, url, token, home, stop(), logs() }.
 * `holdUnwatched` (default true) passes `--hold-unwatched`: tests that hold gates before
 * their page opens (or after it closes) keep them held; tests of unwatched gates pass false.
 */
export async function startServer({ port: wanted, extraArgs = [], holdUnwatched = true } = {}) {
  const home = mkdtempSync(path.join(tmpdir(), 'mindgate-browser-'));
  const port = wanted || await freePort();
  const hold = holdUnwatched && !extraArgs.includes('--hold-unwatched') ? ['--hold-unwatched'] : [];
  const [cmd, args] = [BIN, ['serve', '--port', String(port), '--no-open', '--db', path.join(home, 'mindgate.db'), ...hold, ...extraArgs]];
  if (!existsSync(BIN)) throw new Error(`mindgate binary not found at ${BIN}: run cargo build -p mindgate-cli (or set MINDGATE_BIN)`);
  const child = spawn(cmd, args, { env: { ...process.env, MINDGATE_HOME: home, MINDGATE_LOG: process.env.MINDGATE_LOG || 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const info = path.join(home, 'run', `serve-${port}.json`);
  const deadline = Date.now() + 20000;
  let token = null;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${out}`);
    if (existsSync(info)) {
      try { token = JSON.parse(readFileSync(info, 'utf8')).token; } catch { /* partially written */ }
    }
    if (!token) {
      const m = /[#?&]token=([A-Za-z0-9_.~-]+)/.exec(out);
      if (m) token = m[1];
    }
    if (token) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        if (res.ok) break;
      } catch { /* not listening yet */ }
    }
    await sleep(100);
  }
  if (!token) throw new Error(`server did not become ready:\n${out}`);
  const base = `http://127.0.0.1:${port}`;
  return {
    port, token, home, base,
    url: (hash = '') => `${base}/${hash || '#'}${hash ? '&' : ''}token=${token}`,
    logs: () => out,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        for (let i = 0; i < 50 && child.exitCode === null; i++) await sleep(100);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(home, { recursive: true, force: true });
    },
    process: child,
  };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
      '--no-first-run', '--disable-component-update', '--disable-sync', '--enable-precise-memory-info'],
  });
}

/**
 * `MINDGATE_UI_DIR`: the viewer's scripts and styles (`*.js`, `*.css`) are served to the page
 * from this folder instead of the binary's, so a UI change can be tried against a binary built
 * from another tree (a debug binary reads the `ui/dist` of the tree it was built in; a release
 * binary embeds its own). API requests still go to the server.
 */
const UI_DIR = process.env.MINDGATE_UI_DIR ? path.resolve(process.env.MINDGATE_UI_DIR) : null;

async function serveUiDir(context) {
  const types = { js: 'text/javascript', css: 'text/css', html: 'text/html' };
  const handler = async (route) => {
    const { pathname } = new URL(route.request().url());
    const rel = pathname.replace(/^\/+/, '');
    const file = path.join(UI_DIR, rel);
    if (!file.startsWith(UI_DIR + path.sep) || !existsSync(file)) return route.continue();
    await route.fulfill({ status: 200, contentType: types[rel.split('.').pop()] || 'application/octet-stream', body: readFileSync(file) });
  };
  // Only the viewer's scripts and styles are intercepted: the page itself comes from the server
  // (a page the route made up is not local to chromium, which then blocks its WebSocket to
  // 127.0.0.1), and the API and live feeds go straight through.
  for (const glob of ['**/*.js', '**/*.css']) await context.route(glob, handler);
}

/** A page that records console errors and page errors. */
export async function openPage(browser, url, { width = 1440, height = 900, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme });
  if (UI_DIR) await serveUiDir(context);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  // A console "Failed to load resource" names no address; this line does.
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`http ${r.status()}: ${r.request().method()} ${r.url()}`); });
  await page.goto(url);
  return { page, context, errors };
}

/** Runs a GraphMind agent of `tests/browser/agents/` (default the travel agent); `waitFor(text)` resolves when it prints `text`. */
export function runAgent(port, env = {}, script = 'travel_agent.py') {
  const child = spawn(PYTHON, [path.join(ROOT, 'tests/browser/agents', script)], {
    env: { ...process.env, GRAPHMIND_URL: `ws://127.0.0.1:${port}/ingest`, PYTHONUNBUFFERED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters = [];
  const check = () => { for (const w of [...waiters]) if (out.includes(w.text)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(out); } };
  child.stdout.on('data', (d) => { out += d; check(); });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    waitFor(text, ms = 20000) {
      if (out.includes(text)) return Promise.resolve(out);
      return new Promise((resolve, reject) => {
        const w = { text, resolve };
        waiters.push(w);
        setTimeout(() => { if (waiters.includes(w)) reject(new Error(`agent did not print ${JSON.stringify(text)} within ${ms} ms. Output:\n${out}`)); }, ms);
        exited.then(() => setTimeout(() => { if (waiters.includes(w)) reject(new Error(`agent exited before printing ${JSON.stringify(text)}. Output:\n${out}`)); }, 50));
      });
    },
    kill() { if (child.exitCode === null) child.kill('SIGKILL'); },
  };
}

/** Polls fn until it returns a truthy value. */
export async function until(fn, { timeout = 15000, interval = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${what} (last value: ${JSON.stringify(last)})`);
}

export function artifact(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}

/** A screenshot path under `test-artifacts/<folder>/` (created). */
export function artifactIn(folder, name) {
  const dir = path.join(ROOT, 'test-artifacts', folder);
  mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}

/**
 * Runs `agents/diff_agent.py` once against `srv` as run `name` (`AGENT_VARIANT` = `variant`)
 * and resolves to its run id once the server has it finished `ok`.
 */
export async function recordDiffRun(srv, name, variant) {
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: name, AGENT_VARIANT: variant }, 'diff_agent.py');
  const out = await agent.waitFor('RUN-END ok');
  await agent.exited;
  const id = /RUN-ID (\S+)/.exec(out)[1];
  await until(async () => {
    const res = await fetch(`${srv.base}/api/runs/${encodeURIComponent(id)}`, { headers: { Authorization: `Bearer ${srv.token}` } });
    return res.ok && (await res.json()).status === 'ok';
  }, { what: `run ${name} finished` });
  return id;
}
