// Promises made per 100-step mock loop (bench/harness.mjs), counted by an async hook: on
// Node 20 every promise made while an AsyncLocalStorage is in use pays for its promise hooks
// (an init, a before and an after call into JavaScript), so this count, unlike CPU time on a
// shared machine, is exact and shows what the SDK adds to the hooks' bill. Each variant runs
// once to warm up, then once counted. `node bench/promises.mjs [dist dir of another build]`
// in sdks/typescript (the other build, e.g. an older checkout's `dist/`, is counted too).
import { createHook } from 'node:async_hooks';
import { Session } from '../dist/index.js';
import { baseline, instrumented, sdkAt, STEPS, wrappedOnly } from './harness.mjs';

let made = 0;
const hook = createHook({
  init(_id, type) {
    if (type === 'PROMISE') made += 1;
  },
});

async function count(fn) {
  await fn();
  made = 0;
  await fn();
  return made;
}

const detached = (S) => {
  const s = new S({ url: 'ws://127.0.0.1:9/ingest', env: {}, logger: () => {} });
  s.emitTo('run_bench', 'custom', {}); // starts the transport: enabled, never attached
  return s;
};
const sessions = [];
const variants = [
  ['baseline', baseline],
  ["the ai package's wrapLanguageModel layer, empty middleware (no Mindgate)", wrappedOnly],
];
const own = detached(Session);
sessions.push(own);
variants.push(['Mindgate, detached (this build)', instrumented(own)]);
if (process.argv[2]) {
  const sdk = await sdkAt(process.argv[2]);
  const other = detached(sdk.Session);
  sessions.push(other);
  variants.push([`Mindgate, detached (the build at ${process.argv[2]})`, instrumented(other, sdk)]);
}
hook.enable();
const base = await count(baseline);
for (const [name, fn] of variants) {
  const n = name === 'baseline' ? base : await count(fn);
  console.log(`${name}: ${n} promises per loop (${(n / STEPS).toFixed(2)} a step, ${n - base >= 0 ? '+' : ''}${((n - base) / STEPS).toFixed(2)} against the baseline)`);
}
hook.disable();
for (const s of sessions) await s.dispose(0);
