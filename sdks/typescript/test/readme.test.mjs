// The README's TypeScript block (`<!-- readme-snippet: typescript -->`), run as printed against
// the real `mindgate serve`: it exits 0, prints the answer, and its run is stored with the
// model step and the tool.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { missingBinary, ROOT, startServer, until } from './support.mjs';

const skip = missingBinary() || false;
if (skip) console.log(skip);
const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The fenced block right after `<!-- readme-snippet: NAME -->`. */
export function snippet(markdown, name) {
  const marker = `<!-- readme-snippet: ${name} -->`;
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`no ${marker} in README.md`);
  const fence = markdown.indexOf('```', at);
  const start = markdown.indexOf('\n', fence) + 1;
  const end = markdown.indexOf('\n```', start);
  return markdown.slice(start, end + 1);
}

function node(file, env) {
  return exec(process.execPath, [file], { cwd: pkg, env });
}

function exec(cmd, args, { cwd, env = {}, timeoutMs = 30000 }) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

let srv;
after(async () => srv?.stop());

const NETWORK = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|ENOTCACHED/;

test("this package's README install line works from a clone: both entry points import in a fresh app", async (t) => {
  const line = snippet(readFileSync(path.join(pkg, 'README.md'), 'utf8'), 'install').trim();
  assert.match(line, /^npm install .*\.\.\/mindgate\/sdks\/typescript/);
  const dir = mkdtempSync(path.join(tmpdir(), 'mindgate-install-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(ROOT, path.join(dir, 'mindgate')); // the clone at ../mindgate, as the README says
  const app = path.join(dir, 'app');
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }));
  const install = await exec('sh', ['-c', `${line} --prefer-offline --no-audit --no-fund`], { cwd: app, timeoutMs: 120000 });
  if (install.code !== 0 && NETWORK.test(install.out)) {
    t.skip(`skipped: the npm registry is unreachable and its cache lacks a package (${install.out.match(NETWORK)[0]})`);
    return;
  }
  assert.equal(install.code, 0, install.out);
  const probe = "const mg = await import('mindgate'); const ai = await import('mindgate/ai'); console.log(typeof mg.run, typeof ai.mindgateMiddleware, mg.VERSION)";
  const imported = await exec(process.execPath, ['--input-type=module', '-e', probe], { cwd: app });
  assert.equal(imported.code, 0, imported.out);
  const pkgVersion = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')).version;
  assert.equal(imported.out.trim(), `function function ${pkgVersion}`);
  const aiMajor = JSON.parse(readFileSync(path.join(app, 'node_modules/ai/package.json'), 'utf8')).version.split('.')[0];
  assert.equal(aiMajor, '6', 'an ai major inside the peer range');
});

test("README's TypeScript block runs as printed and its run is stored", { skip }, async () => {
  srv = await startServer();
  const code = snippet(readFileSync(path.join(ROOT, 'README.md'), 'utf8'), 'typescript');
  // Inside the package, so `mindgate` (self-reference) and `ai` resolve as in an app.
  const file = path.join(pkg, '.readme-snippet.mjs');
  writeFileSync(file, code);
  let result;
  try {
    result = await node(file, { GRAPHMIND_URL: srv.ingest, MINDGATE_URL: '' });
  } finally {
    rmSync(file, { force: true });
  }
  assert.equal(result.code, 0, result.out);
  assert.match(result.out, /Sunny and 18 °C in Oslo\./);
  const run = await until(async () => (await srv.api('/api/runs?limit=10')).runs.find((r) => r.name === 'weather-question' && r.status === 'ok'), { what: 'the README run stored' });
  assert.equal(run.app, 'weather-bot');
  const graph = await srv.api(`/api/runs/${run.id}/graph`);
  assert.deepEqual(graph.nodes.map((n) => n.nodeId).sort(), ['agent:weather-question', 'llm:step', 'tool:get_weather']);
});

test('examples/agent.mjs: held at the failing tool\'s error gate, retried from the viewer\'s API, exits 0', { skip }, async () => {
  srv ??= await startServer();
  const child = node(path.join(pkg, 'examples/agent.mjs'), { GRAPHMIND_URL: srv.ingest, MINDGATE_URL: '' });
  const pause = await until(async () => (await srv.api('/api/pauses?wait=5')).pauses.find((p) => p.nodeId === 'tool:book_table'), { what: 'the error gate of book_table', timeout: 20000 });
  assert.equal(pause.point, 'error');
  const res = await srv.api(`/api/runs/${pause.runId}/pauses/${pause.pauseId}/resume`, { method: 'POST', body: { action: 'retry' } });
  assert.equal(res.result, 'resumed');
  const { code, out } = await child;
  assert.equal(code, 0, out);
  assert.match(out, /done: .*booked.* \(3 steps, 2 booking attempts\)/);
  await until(async () => (await srv.api('/api/runs?limit=10')).runs.find((r) => r.id === pause.runId)?.status === 'ok', { what: 'the example run ok' });
});
