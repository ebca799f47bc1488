// Issue 26 at the page, on genuine transcripts: the 220-step pi session, a Claude Code session
// with two subagent calls and a Codex session whose subagent sessions are linked, read from
// ../shared/data/real-sessions when it is present (skipped with a message when absent; the
// files are other people's text and are never copied into the repo — only into a temp dir
// for the server). For each, light and dark at 1440×900: the overview (every turn on screen and
// labelled, no label under 11 px, rows not overlapping), the busiest turn zoomed (no edge or
// path line through a box), the timeline (and zoomed to the rows in view), and the subagents
// expanded in place. Screenshots go to test-artifacts/tgpage/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, ROOT } from './lib/harness.mjs';

/** The genuine transcripts: `MINDGATE_REAL_SESSIONS`, else `../shared/data/real-sessions` from the repo. */
const REAL = process.env.MINDGATE_REAL_SESSIONS || path.resolve(ROOT, '..', 'shared', 'data', 'real-sessions');
const SHOTS = path.join(ROOT, 'test-artifacts', 'tgpage');
const BIN = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');

/** The sessions pictured: a short name, the files (the first is the session), its folder. */
const SESSIONS = [
  { name: 'pi-220', files: ['pi/badlogic__pi-mono__session.jsonl'], dir: 'pi' },
  { name: 'claude-subagents', files: ['claude/codemie-ai__codemie-code__session-9eda1058.jsonl'], dir: 'claude/-tmp-codemie' },
  {
    name: 'codex-subagents',
    files: [
      'codex/iampkuhz__feipi-session-browser__rollout-2026-06-19T12-29-48-019ede24-67de-7b11-b46f-7922530907a9.COMPACTED.jsonl',
      'codex/iampkuhz__feipi-session-browser__rollout-2026-06-19T12-32-38-019ede26-ff03-7a82-bb34-cfab716a498a.jsonl',
      'codex/iampkuhz__feipi-session-browser__rollout-2026-06-19T12-32-38-019ede26-fff1-7790-ad39-a8a29eda9af4.jsonl',
    ],
    dir: 'codex/2026/06/19',
  },
];

const present = existsSync(REAL) && SESSIONS.every((s) => s.files.every((f) => existsSync(path.join(REAL, f))));
const skip = present ? false : `skipped: ${REAL} is absent (the genuine transcripts are not part of the repo; set MINDGATE_REAL_SESSIONS)`;
if (skip) console.log(skip);

let srv;
let browser;
let sessions;

before(async () => {
  if (skip) return;
  sessions = mkdtempSync(path.join(tmpdir(), 'mindgate-real-'));
  for (const s of SESSIONS) {
    mkdirSync(path.join(sessions, s.dir), { recursive: true });
    for (const f of s.files) cpSync(path.join(REAL, f), path.join(sessions, s.dir, path.basename(f)));
    // The CLI's id and counts of the session (what the page must show).
    const g = JSON.parse(execFileSync(BIN, ['taskgraph', path.join(sessions, s.dir, path.basename(s.files[0])), '--json'], { maxBuffer: 1 << 28 }).toString());
    s.id = g.session_id;
    s.headline = g.summary.headline;
  }
  srv = await startServer({ extraArgs: ['--no-default-homes', '--sessions', sessions] });
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
  if (sessions) rmSync(sessions, { recursive: true, force: true });
});

const overviewOf = (page) => page.evaluate(() => window.mindgateTasks.overview());

/** Every element matching `sel`: its text, font size and box. */
function measure(page, sel) {
  return page.locator(sel).evaluateAll((els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { text: e.textContent.trim(), font: parseFloat(getComputedStyle(e).fontSize), top: r.top, bottom: r.bottom, left: r.left, right: r.right };
  }));
}

/** Whether segment a→b passes through the inside of box (shrunk by `inset` px). */
function crosses([ax, ay], [bx, by], box, inset = 2) {
  const x0 = box.x + inset;
  const x1 = box.x + box.w - inset;
  const y0 = box.y + inset;
  const y1 = box.y + box.h - inset;
  if (x1 <= x0 || y1 <= y0) return false;
  let t0 = 0;
  let t1 = 1;
  const dx = bx - ax;
  const dy = by - ay;
  for (const [p, q] of [[-dx, ax - x0], [dx, x1 - ax], [-dy, ay - y0], [dy, y1 - ay]]) {
    if (p === 0) { if (q < 0) return false; continue; }
    const r = q / p;
    if (p < 0) t0 = Math.max(t0, r); else t1 = Math.min(t1, r);
    if (t0 > t1) return false;
  }
  return t1 - t0 > 1e-6;
}

/** Every drawn line of the open graph that runs through a box it does not end at. */
async function linesThroughBoxes(page) {
  const { boxes, lines } = await page.evaluate(() => ({ boxes: window.mindgateTasks.boxes(), lines: window.mindgateTasks.edgeLines() }));
  const bad = [];
  for (const l of lines) {
    for (let k = 1; k < l.pts.length; k++) {
      for (const b of boxes) {
        if (b.id === l.from || b.id === l.to) continue;
        if (crosses(l.pts[k - 1], l.pts[k], b)) bad.push(`${l.kind} ${l.from || ''}→${l.to || ''} through ${b.id}`);
      }
    }
  }
  return { bad, lines: lines.length, boxes: boxes.length };
}

for (const s of SESSIONS) {
  for (const colorScheme of ['light', 'dark']) {
    test(`${s.name} (${colorScheme}): overview, a zoomed turn, the timeline and the subagents at 1440×900`, { skip }, async () => {
      const shot = (what) => page.screenshot({ path: path.join(SHOTS, `${s.name}-${what}-${colorScheme}.png`) });
      const { page, errors } = await openPage(browser, srv.url(), { colorScheme });
      await page.goto(srv.url(`#/task/${s.id}`));
      await until(async () => (await overviewOf(page))?.session_id === s.id, { what: `the overview of ${s.name}` });
      await page.locator('.tov-turn').first().waitFor();
      const ov = await overviewOf(page);
      assert.deepEqual(ov.headline, s.headline, 'the page\'s counts are the CLI\'s');
      // Every turn on screen, labelled, at 11 px or more, rows not overlapping.
      const rows = await measure(page, '.tov-turn');
      assert.equal(rows.length, s.headline.turns, 'one row per turn');
      rows.forEach((r, i) => {
        assert.ok(r.top >= 0 && r.bottom <= 900, `turn ${i + 1} on screen (${r.top}–${r.bottom})`);
        if (i) assert.ok(r.top >= rows[i - 1].bottom - 0.5, `turn ${i + 1} below turn ${i}`);
      });
      for (const sel of ['.tov-turn .tov-num', '.tov-turn .tov-msg', '.tov-turn .tov-counts', '.tov-tick', '.tg-stats-line']) {
        for (const c of await measure(page, sel)) {
          assert.ok(c.font >= 11, `${sel} "${c.text.slice(0, 20)}" at ${c.font}px`);
          assert.ok(c.text.length > 0, `${sel} labelled`);
        }
      }
      assert.ok((await page.evaluate(() => window.mindgateTasks.pathBand())).length > 0, 'the critical path is drawn');
      await shot('overview');

      // Subagents expanded in place, each under its turn.
      const withSubs = ov.turns.filter((t) => t.subagents.length);
      assert.equal(withSubs.reduce((n, t) => n + t.subagents.length, 0), s.headline.subagents ?? 0, 'every subagent call listed');
      for (const t of withSubs) await page.locator(`.tov-turn[data-turn="${t.id}"] .tov-sub-toggle`).click();
      if (withSubs.length) {
        await until(async () => (await page.locator('.tov-child').count()) === s.headline.subagents, { what: 'the subagents expanded' });
        const children = await measure(page, '.tov-child .tov-msg');
        for (const c of children) assert.ok(c.font >= 11 && c.bottom <= 900, `subagent "${c.text.slice(0, 20)}" readable on screen`);
        await shot('subagents');
      }

      // The busiest turn zoomed: readable boxes, no line through a box.
      const busiest = ov.turns.reduce((a, t) => (t.counts.steps + t.counts.tool_calls > a.counts.steps + a.counts.tool_calls ? t : a));
      await page.locator(`.tov-turn[data-turn="${busiest.id}"]`).click();
      await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).some((b) => b.type === 'agent'), { what: `${busiest.id} drawn` });
      await until(async () => (await page.evaluate(() => window.mindgateTasks.edgeLines())).length > 0, { what: 'its lines drawn' });
      const zoomed = await linesThroughBoxes(page);
      assert.deepEqual(zoomed.bad, [], `no line through a box in ${busiest.id}`);
      for (const b of await page.evaluate(() => window.mindgateTasks.boxes())) if (b.type === 'agent') assert.ok(b.h >= 27, `${b.id} at full size`);
      await shot('turn');

      // The whole graph: lines never through boxes either.
      await page.locator('.tg-tab[data-view="graph"]').click();
      await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).some((b) => b.type === 'phase'), { what: 'the whole graph' });
      await until(async () => (await page.evaluate(() => window.mindgateTasks.edgeLines())).length > 0, { what: 'its lines drawn' });
      const whole = await linesThroughBoxes(page);
      assert.deepEqual(whole.bad, [], 'no line through a box in the whole graph');

      // The timeline, whole and zoomed to the rows in view.
      await page.locator('.tg-tab[data-view="timeline"]').click();
      await until(async () => (await page.evaluate(() => window.mindgateTasks.timelineRows())).length >= Math.min(10, s.headline.steps + s.headline.tool_calls), { what: 'the timeline' });
      await shot('timeline');
      const frame = () => page.evaluate(() => Number(document.querySelector('.ttl-canvas').dataset.frame));
      const before = await frame();
      await page.locator('.ttl-scroll').focus();
      // A long session zooms to the rows in view (f); a short one's rows are all in view: zoom in (+).
      await page.keyboard.press(s.headline.steps + s.headline.tool_calls > 40 ? 'f' : '+');
      await until(async () => (await page.evaluate(() => window.mindgateTasks.page.timelineView.win[1] - window.mindgateTasks.page.timelineView.win[0])) < 1, { what: 'the time axis zoomed' });
      await until(async () => (await frame()) > before, { what: 'the zoomed timeline drawn' });
      await shot('timeline-zoomed');
      assert.deepEqual(errors, [], errors.join('\n'));
      await page.close();
    });
  }
}
