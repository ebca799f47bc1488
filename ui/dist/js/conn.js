// The control token and the two ways to talk to `mindgate serve`: the /ws/ui
// feed (reconnects by itself) and JSON over HTTP.

import { EMBEDDED, embeddedApi, embeddedWelcome, embeddedSnapshot } from './embedded.js';

const TOKEN_KEY = 'mindgate.token';

/**
 * Takes the control token out of the URL (`#token=…`, `#/run/x?token=…` or
 * `?token=…`), keeps it in sessionStorage and removes it from the address bar
 * so it does not end up in screenshots or history.
 */
export function takeToken() {
  const url = new URL(location.href);
  let token = null;
  let hash = url.hash;
  const m = /[#&?]token=([^&]+)/.exec(hash);
  if (m) {
    token = decodeURIComponent(m[1]);
    hash = hash.replace(/([#&?])token=[^&]+&?/, '$1').replace(/[&?]$/, '');
    if (hash === '#') hash = '';
  }
  if (url.searchParams.has('token')) {
    token = url.searchParams.get('token');
    url.searchParams.delete('token');
  }
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    url.hash = hash;
    history.replaceState(null, '', url.toString());
  }
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export class Feed {
  /** `onMessage(msg)`, `onState('connecting'|'open'|'closed', detail)`. */
  constructor(token, onMessage, onState) {
    this.token = token;
    this.onMessage = onMessage;
    this.onState = onState;
    this.ws = null;
    this.delay = 250;
    this.timer = null;
    this.stopped = false;
  }

  connect() {
    clearTimeout(this.timer);
    if (EMBEDDED) {
      // An exported page opens no socket: the embedded run stands in for the server.
      this.onState('open');
      for (const msg of embeddedWelcome()) this.onMessage(msg);
      return;
    }
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const q = this.token ? `?token=${encodeURIComponent(this.token)}` : '';
    let ws;
    try {
      ws = new WebSocket(`${proto}//${location.host}/ws/ui${q}`);
    } catch (err) {
      this.retry(String(err));
      return;
    }
    this.ws = ws;
    this.onState('connecting');
    ws.onopen = () => { this.delay = 250; this.onState('open'); };
    ws.onmessage = (e) => {
      let msg;
      try { msg = JSON.parse(e.data); } catch { return; }
      if (msg && typeof msg.type === 'string') this.onMessage(msg);
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.retry(e.reason || `code ${e.code}`);
    };
    ws.onerror = () => {}; // onclose follows and reports
  }

  retry(reason) {
    if (this.stopped) return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, 5000);
    this.onState('closed', { reason, retryInMs: wait });
    this.timer = setTimeout(() => this.connect(), wait);
  }

  /** Reconnects now (the "Reconnect" button). */
  kick() { if (!this.ws) { this.delay = 250; this.connect(); } }

  get open() { return EMBEDDED ? false : !!this.ws && this.ws.readyState === WebSocket.OPEN; }

  send(msg) {
    if (EMBEDDED) {
      // An exported page: a subscribe is answered with the embedded snapshot; nothing else is sent.
      if (msg.type !== 'subscribe' || !msg.projection) return false;
      setTimeout(() => { for (const part of embeddedSnapshot(msg.runId)) this.onMessage(part); }, 0);
      return true;
    }
    if (!this.open) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }
}

/** JSON over HTTP; every call carries the bearer token when there is one (remote access needs it on reads too). */
export async function api(token, path, { method = 'GET', body, signal } = {}) {
  if (EMBEDDED) return embeddedApi(path, method);
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch { /* empty body */ }
  if (!res.ok) {
    const msg = (data && (data.error || data.message)) || `${res.status} ${res.statusText}`;
    const err = new Error(msg);
    err.status = res.status;
    err.code = data && data.code;
    err.reason = data && data.reason;
    throw err;
  }
  return data;
}
