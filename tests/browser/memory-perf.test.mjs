// Performance of the memory inspector, reported, never asserted (ui/README.md): a store of
// MINDGATE_MEMORY_PERF_FACTS facts (e.g. 100000, written through the HTTP API), the first render
// of #/memory (counters and the first rows drawn), and search as you type: keystroke → the hits
// of a text including that keystroke drawn (p50 / p95). Skipped unless the variable is set.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { startServer, launchBrowser, openPage, until, artifact } from './lib/harness.mjs';

const FACTS = Number(process.env.MINDGATE_MEMORY_PERF_FACTS || 0);
const USER = 'perf';
const NOUNS = ['train', 'hotel', 'ticket', 'museum', 'harbour', 'market', 'bridge', 'garden', 'castle', 'station', 'ferry', 'bakery'];
const CITIES = ['Lisbon', 'Porto', 'Tbilisi', 'Batumi', 'Kraków', 'Gdańsk', 'Tallinn', 'Riga', 'Vilnius', 'Ljubljana'];
const ADJ = ['quiet', 'crowded', 'cheap', 'famous', 'old', 'new', 'windy', 'sunny', 'late', 'early'];

let srv;
let browser;

before(async () => {
  if (!FACTS) return;
  srv = await startServer();
  const t0 = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < FACTS) {
      const i = next++;
      const text = `Note ${i}: the ${ADJ[i % ADJ.length]} ${NOUNS[(i >> 3) % NOUNS.length]} in ${CITIES[(i >> 5) % CITIES.length]} opens at ${i % 24}h`;
      const res = await fetch(`${srv.base}/api/memory/facts`, {
        method: 'POST', headers: { Authorization: `Bearer ${srv.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: USER, text }),
      });
      if (res.status !== 201) throw new Error(`fact ${i}: ${res.status} ${await res.text()}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  console.log(`# filled ${FACTS} facts over HTTP in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

function peakRssMb(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch { return null; }
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

test('memory inspector: first render and search-as-you-type latency at size', { skip: FACTS ? false : 'set MINDGATE_MEMORY_PERF_FACTS (e.g. 100000) to measure' }, async () => {
  // The server's first search after the fill loads what it searches (cold): timed apart, so
  // the keystroke figures are the warm ones a person sees once the inspector is in use.
  const c0 = Date.now();
  await (await fetch(`${srv.base}/api/memory/search?userId=${USER}&query=warm`)).json();
  const coldSearchMs = Date.now() - c0;
  const renders = [];
  let page;
  let errors;
  for (let round = 0; round < 3; round++) {
    if (page) await page.context().close();
    const t0 = Date.now();
    ({ page, errors } = await openPage(browser, srv.url('#/memory')));
    await until(async () => (await page.locator('#mem-tab-semantic').getAttribute('data-count')) === String(FACTS)
      && (await page.locator('.mem-list-host:not([hidden]) .mem-row').count()) > 0, { timeout: 60000, interval: 10, what: 'the first render' });
    renders.push(Date.now() - t0);
  }
  // Keystroke → drawn: every input event's timestamp, and the frame after the store draws
  // hits for a text that includes it (coalesced keystrokes are drawn by a later search).
  await page.evaluate(() => {
    const m = window.mindgateMemory;
    const input = document.querySelector('.mem-search');
    m.perfKeys = [];
    m.perfLatencies = [];
    document.addEventListener('input', (e) => { if (e.target === input && input.value.trim()) m.perfKeys.push({ t: e.timeStamp, text: input.value.trim() }); }, true);
    m.store.on('search', (s) => {
      requestAnimationFrame(() => {
        const now = performance.now();
        const q = s.drawnFor || '';
        m.perfKeys = m.perfKeys.filter((k) => {
          if (k.text && q.startsWith(k.text)) { m.perfLatencies.push(now - k.t); return false; }
          return true;
        });
      });
    });
  });
  const queries = ['quiet train Lisbon', 'famous castle Riga', 'cheap hotel Porto', 'old bridge Tallinn', 'sunny garden Batumi',
    'late ferry Gdańsk', 'new museum Kraków', 'windy harbour Vilnius', 'early bakery Tbilisi', 'crowded station Ljubljana'];
  const search = page.getByLabel('Search memory');
  for (const q of queries) {
    await search.fill('');
    await until(() => page.evaluate(() => window.mindgateMemory.store.search.hits === null), { what: 'the cleared search' });
    await search.pressSequentially(q, { delay: 60 });
    await until(() => page.evaluate((text) => window.mindgateMemory.searchDrawn().query === text, q), { timeout: 30000, what: `hits for ${q}` });
    await until(() => page.evaluate(() => window.mindgateMemory.perfKeys.length === 0), { timeout: 5000, what: 'every keystroke drawn' });
  }
  const lat = await page.evaluate(() => window.mindgateMemory.perfLatencies);
  const figures = {
    facts: FACTS,
    coldFirstSearchMs: coldSearchMs,
    firstRenderMs: renders,
    keystrokes: lat.length,
    searchP50Ms: Math.round(quantile(lat, 0.5)),
    searchP95Ms: Math.round(quantile(lat, 0.95)),
    searchMaxMs: Math.round(Math.max(...lat)),
    // The server's peak resident memory so far (Linux VmHWM), filling included.
    serverPeakRssMb: peakRssMb(srv.process.pid),
  };
  console.log(`# memory inspector perf: ${JSON.stringify(figures)}`);
  writeFileSync(artifact('memory-perf.json'), JSON.stringify(figures, null, 2));
  assert.ok(lat.length > 0);
  assert.deepEqual(errors, []);
  await page.context().close();
});
