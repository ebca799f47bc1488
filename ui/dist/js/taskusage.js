// The Tasks page's Usage view (#/tasks/usage): tokens and cost of every coding-agent session on
// this machine, by day, week, month, agent, model, project or session — the report
// `mindgate usage` prints, from GET /task-graph/api/usage (computed once, in the server's
// catalog; nothing is summed here except the bar widths).

import { el } from './dom.js';
import { countOf, fmtUsd, costDetail } from './format.js';

const API = '/task-graph/api';
const GROUPS = [['day', 'Day'], ['week', 'Week'], ['month', 'Month'], ['agent', 'Agent'], ['model', 'Model'], ['project', 'Project'], ['session', 'Session']];
const SINCE = [['', 'All time'], ['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days']];
// Token kinds in the order the bars stack them (the columns add up to the total).
const KINDS = [['fresh', 'Input'], ['cache_write', 'Cache write'], ['cache_read', 'Cache read'], ['output', 'Output']];

function browserZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { return 'UTC'; }
}

/** Tokens by kind as the bars and columns show them: input without the cache writes it includes. */
export function usageParts(t = {}) {
  return {
    fresh: Math.max(0, (t.input || 0) - (t.cache_write || 0)),
    cache_write: t.cache_write || 0,
    cache_read: t.cache_read || 0,
    output: t.output || 0,
  };
}

const num = (n) => (n || 0).toLocaleString();

/** `$1.23`; `≥ $1.23` when some model had no price (the priced part); `unpriced` when none had one. */
export function usageCost(cost) {
  if (!cost) return '';
  if (cost.usd != null) return fmtUsd(cost.usd);
  return cost.pricedUsd > 0 ? `≥ ${fmtUsd(cost.pricedUsd)}` : 'unpriced';
}

export class TaskUsageView {
  /** @param {HTMLElement} root @param {(url: string) => Promise<any>} getJson */
  constructor(root, getJson) {
    this.root = root;
    this.getJson = getJson;
    this.by = 'day';
    this.since = '';
  }

  async show() {
    this.status = el('span', { class: 'muted small' }, 'Loading…');
    this.groupBar = el('div', { class: 'tu-groups', role: 'group', 'aria-label': 'Group usage by' },
      ...GROUPS.map(([by, label]) => el('button', {
        type: 'button', class: 'btn tu-group', 'data-by': by, 'aria-pressed': String(by === this.by),
        onclick: () => { this.by = by; this.load(); },
      }, label)));
    const since = el('select', { class: 'tu-since', 'aria-label': 'Usage since' },
      ...SINCE.map(([v, label]) => el('option', { value: v }, label)));
    since.value = this.since;
    since.addEventListener('change', () => { this.since = since.value; this.load(); });
    this.cards = el('div', { class: 'tu-cards' });
    this.tableHost = el('div', { class: 'tg-table-wrap tu-table-wrap' });
    this.root.replaceChildren(
      el('div', { class: 'tu-bar' }, this.groupBar, since, this.status),
      this.cards,
      this.tableHost);
    await this.load();
  }

  async load() {
    for (const b of this.groupBar.querySelectorAll('.tu-group')) b.setAttribute('aria-pressed', String(b.dataset.by === this.by));
    const zone = browserZone();
    const q = new URLSearchParams({ by: this.by, tz: zone });
    if (this.since) {
      const d = new Date(Date.now() - Number(this.since) * 86_400_000);
      q.set('since', String(d.getTime()));
    }
    const seq = (this.seq = (this.seq || 0) + 1);
    this.status.textContent = 'Loading…';
    let report;
    try {
      report = await this.getJson(`${API}/usage?${q}`);
    } catch (err) {
      if (seq === this.seq) this.status.textContent = `Could not load usage: ${err.message}`;
      return;
    }
    if (seq !== this.seq) return;
    this.report = report;
    this.root.dataset.by = report.by;
    this.status.textContent = report.by === 'day' || report.by === 'week' || report.by === 'month' ? `times in ${report.tz}` : '';
    this.renderCards(report);
    this.renderTable(report);
  }

  renderCards(report) {
    const t = report.total.tokens;
    const parts = usageParts(t);
    const card = (label, value, title = '', kind = '') => el('div', { class: `tu-card${kind ? ` tu-card-${kind}` : ''}`, title },
      el('div', { class: 'tu-card-label' }, label), el('div', { class: 'tu-card-value' }, value));
    this.cards.replaceChildren(
      card('Cost', usageCost(report.total.cost), costDetail(report.total.cost)),
      card('Tokens', num(t.total), 'input + cache write + cache read + output'),
      ...KINDS.map(([k, label]) => card(label, num(parts[k]), `${label} tokens (the bar colour in the table)`, k)),
      card('Sessions', num(report.total.sessions), 'sessions with token usage, subagent sessions counted once'),
      report.unpriced_models?.length
        ? el('div', { class: 'tu-unpriced', role: 'note' },
          `No price for ${report.unpriced_models.join(', ')}: tokens counted, cost not guessed (add them to prices.toml).`)
        : null);
  }

  renderTable(report) {
    const rows = report.rows || [];
    if (!rows.length) {
      this.tableHost.replaceChildren(el('p', { class: 'muted pad' }, 'No token usage in this period.'));
      return;
    }
    const max = Math.max(1, ...rows.map((r) => r.tokens.total || 0));
    const keyHead = GROUPS.find(([b]) => b === report.by)?.[1] || 'Key';
    const head = [keyHead, 'Sessions', 'Tokens by kind', 'Input', 'Cache write', 'Cache read', 'Output', 'Total', 'Cost', 'Models'];
    const body = el('tbody', {}, ...rows.map((r) => this.row(r, max)));
    const total = report.total;
    const tp = usageParts(total.tokens);
    const foot = el('tfoot', {}, el('tr', { class: 'tu-total' },
      el('th', { scope: 'row' }, 'Total'), el('td', { class: 'num' }, num(total.sessions)), el('td'),
      ...KINDS.map(([k]) => el('td', { class: 'num' }, num(tp[k]))),
      el('td', { class: 'num' }, num(total.tokens.total)),
      el('td', { class: 'num', title: costDetail(total.cost) }, usageCost(total.cost)),
      el('td', { class: 'small muted' }, countOf(total.models.length, 'model'))));
    this.tableHost.replaceChildren(el('table', { class: 'tg-table tu-table' },
      el('thead', {}, el('tr', {}, ...head.map((h, i) => el('th', { scope: 'col', class: i >= 3 && i <= 8 ? 'num' : '' }, h)))),
      body, foot));
  }

  row(r, max) {
    const parts = usageParts(r.tokens);
    const width = (n) => `${(100 * n) / max}%`;
    const bar = el('div', { class: 'tu-bar-track', title: KINDS.map(([k, l]) => `${l} ${num(parts[k])}`).join(' · ') },
      ...KINDS.map(([k]) => el('span', { class: `tu-seg tu-${k}`, style: `width:${width(parts[k])}` })));
    const key = r.title
      ? el('td', {}, el('a', { class: 'tg-link', href: `#/task/${encodeURIComponent(r.key)}`, title: r.title }, r.title || r.key),
        el('div', { class: 'mono small muted' }, r.key))
      : el('td', { class: keyClass(r.key), title: r.key }, r.key);
    return el('tr', { class: 'tg-row tu-row', 'data-key': r.key },
      key,
      el('td', { class: 'num' }, num(r.sessions)),
      el('td', { class: 'tu-bar-cell' }, bar),
      ...KINDS.map(([k]) => el('td', { class: 'num' }, num(parts[k]))),
      el('td', { class: 'num' }, num(r.tokens.total)),
      el('td', { class: 'num', title: costDetail(r.cost) }, usageCost(r.cost)),
      el('td', { class: 'small muted tu-models', title: r.models.join(', ') }, r.models.join(', ')));
  }
}

function keyClass(key) {
  return key.startsWith('/') ? 'mono small tu-key' : 'tu-key';
}
