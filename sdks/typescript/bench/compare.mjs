// Before / after in one process, under the same load: another build of the SDK (the `dist/`
// of an older checkout, MINDGATE_SDK_BEFORE) against this one, on the 100-step mock
// generateText loop, detached and attached to `mindgate serve` (MINDGATE_BIN), plus the CPU
// cost of one emit. Each repetition runs every variant once, starting from a different one,
// each on a collected heap, so no variant pays for another's garbage:
//
//   git -C ../.. archive <commit> sdks/typescript | tar -x -C /tmp/before
//   MINDGATE_SDK_BEFORE=/tmp/before/sdks/typescript/dist node --expose-gc bench/compare.mjs [reps]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import * as NEW from '../dist/index.js';
import * as NEWAI from '../dist/ai.js';
import { missingBinary, startServer } from '../test/support.mjs';

const before = process.env.MINDGATE_SDK_BEFORE;
const why = !before ? 'MINDGATE_SDK_BEFORE (the dist/ directory of the SDK to compare with) is not set' : missingBinary();
if (why) {
  console.log(`skipped: ${why}`);
  process.exit(0);
}
const beforeDist = pathToFileURL(path.resolve(before) + '/').href;
const OLD = await import(new URL('index.js', beforeDist).href);
const OLDAI = await import(new URL('ai.js', beforeDist).href);
function loopModel(steps) {
  let n = 0;
  const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } };
  return new MockLanguageModelV3({ doGenerate: async () => { n += 1;
      if (n % steps === 0) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop' }, usage, warnings: [] };
      return { content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: `{"q":"${n}"}` }], finishReason: { unified: 'tool-calls' }, usage, warnings: [] }; } });
}
const searchTool = () => ({ search: tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => ({ hits: [q] }) }) });
const srv = await startServer();
const mk = (M, url) => new M.Session({ url, env: {}, app: 'bench', logger: () => {} });
const S = { oldDet: mk(OLD, 'ws://127.0.0.1:9/ingest'), newDet: mk(NEW, 'ws://127.0.0.1:9/ingest'), oldAtt: mk(OLD, srv.ingest), newAtt: mk(NEW, srv.ingest) };
S.oldDet.emitTo('r', 'custom', {}); S.newDet.emitTo('r', 'custom', {});
await S.oldAtt.ready(5000); await S.newAtt.ready(5000);
const withMg = (M, AI, s) => () => M.run('bench-loop', (ctx) => generateText({ model: wrapLanguageModel({ model: loopModel(100), middleware: AI.mindgateMiddleware({ session: s }) }), tools: AI.mindgateTools(searchTool(), { session: s }), prompt: 'go', stopWhen: stepCountIs(100), abortSignal: ctx.signal }), { session: s });
const V = {
  baseline: () => generateText({ model: loopModel(100), tools: searchTool(), prompt: 'go', stopWhen: stepCountIs(100), abortSignal: new AbortController().signal }),
  oldDetached: withMg(OLD, OLDAI, S.oldDet), newDetached: withMg(NEW, NEWAI, S.newDet),
  oldAttached: withMg(OLD, OLDAI, S.oldAtt), newAttached: withMg(NEW, NEWAI, S.newAtt),
};
const keys = Object.keys(V);
const times = Object.fromEntries(keys.map((k) => [k, []]));
for (const k of keys) await V[k]();
const reps = Number(process.argv[2] || 31);
for (let r = 0; r < reps; r++) for (let j = 0; j < keys.length; j++) { const k = keys[(r + j) % keys.length]; globalThis.gc?.(); const c0 = process.cpuUsage(); await V[k](); const c = process.cpuUsage(c0); times[k].push((c.user + c.system) / 1000); }
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = med(times.baseline);
for (const k of keys) console.log(k.padEnd(12), med(times[k]).toFixed(1).padStart(6), 'ms', `${(med(times[k]) - base).toFixed(1)} ms`.padStart(9), `${((med(times[k]) / base - 1) * 100).toFixed(1)} %`.padStart(7));
// emit per call, CPU
function emitCpu(fn, n = 200000) { for (let i = 0; i < 10000; i++) fn(); const c0 = process.cpuUsage(); for (let i = 0; i < n; i++) fn(); const c = process.cpuUsage(c0); return ((c.user + c.system) / n).toFixed(2); }
// An older SDK has no emitOwned: it serialised every event at emit.
const tok = () => ({ nodeId: 'llm:step', instanceId: 'run_bench:s1', deltas: [{ t: 'text', v: 'hello world' }] });
const out = { hits: ['a result of the search tool'], total: 1 };
const fin = () => ({ nodeId: 'tool:search', instanceId: 'call_1', durationMs: 0.42, status: 'ok', output: out });
console.log('emit node.token, detached   before', emitCpu(() => S.oldDet.emitTo('r', 'node.token', tok())), 'now', emitCpu(() => S.newDet.emitOwned('r', 'node.token', tok())), 'µs CPU');
console.log('emit node.finished, detached before', emitCpu(() => S.oldDet.emitTo('r', 'node.finished', fin())), 'now', emitCpu(() => S.newDet.emitTo('r', 'node.finished', fin())), 'µs CPU');
for (const s of Object.values(S)) await s.dispose(0);
await srv.stop();
