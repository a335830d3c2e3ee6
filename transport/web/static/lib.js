// Shared helpers for Podium's pages: HTTP calls, the websocket, DOM building, notices.
// User-supplied text is only ever inserted with textContent (never innerHTML).

/** ApiError is a non-2xx answer: status and the server's {"error": ...} text. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function parse(res) {
  const text = await res.text();
  let body = null;
  if (text) {
    try { body = JSON.parse(text); } catch { body = text; }
  }
  if (!res.ok) {
    const msg = body && typeof body === 'object' && body.error ? body.error : `HTTP ${res.status}`;
    throw new ApiError(res.status, msg);
  }
  return body;
}

/** api calls the JSON API with the page's cookies; it throws ApiError on failure. */
export async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'Network error: is the server reachable?');
  }
  return parse(res);
}

/** upload posts a multipart form. */
export async function upload(path, form) {
  let res;
  try {
    res = await fetch(path, { method: 'POST', body: form, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'Network error: is the server reachable?');
  }
  return parse(res);
}

/**
 * h builds an element: h('button', {class: 'x', onclick: fn}, 'text', child, ...).
 * Attributes starting with "on" become listeners; strings become text nodes.
 */
export function h(tag, attrs, ...children) {
  const svg = tag.startsWith('svg:');
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' && !svg) el.value = v;
    else if (k === 'checked' && !svg) el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** $ finds one element by selector. */
export const $ = (sel, root = document) => root.querySelector(sel);

/** show shows the element (and hides the others given). */
export function show(el, ...others) {
  for (const o of others) if (o) o.hidden = true;
  if (el) el.hidden = false;
}

let toastTimer = 0;
/** toast shows a short notice in the page's live region. */
export function toast(msg, bad = false) {
  let t = document.getElementById('toast');
  if (!t) {
    t = h('div', { id: 'toast', role: 'status', 'aria-live': 'polite' });
    document.body.append(t);
  }
  t.textContent = msg;
  t.className = bad ? 'bad' : '';
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, bad ? 6000 : 3000);
}

/** fmtClock formats milliseconds as h:mm:ss. */
export function fmtClock(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const hh = Math.floor(s / 3600), mm = Math.floor((s % 3600) / 60), ss = s % 60;
  return `${hh}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}`;
}

/** fmtCountdown formats seconds as m:ss (negative as -m:ss). */
export function fmtCountdown(sec) {
  const neg = sec < 0;
  const s = Math.abs(Math.trunc(sec));
  return `${neg ? '-' : ''}${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** groupName returns the display name of group index g. */
export function groupName(info, g) {
  if (info && Array.isArray(info.names) && info.names[g]) return info.names[g];
  return `Group ${Number(g) + 1}`;
}

/**
 * LiveSocket keeps a websocket to /api/ws open (reconnecting with backoff) and hands each
 * server message {type, seq, data} to onMessage. onState(true|false) reports the link.
 */
export class LiveSocket {
  constructor(onMessage, onState) {
    this.onMessage = onMessage;
    this.onState = onState || (() => {});
    this.delay = 500;
    this.closed = false;
    // Back online: reconnect now rather than at the end of the back-off.
    window.addEventListener('online', () => {
      if (this.closed || (this.ws && this.ws.readyState <= WebSocket.OPEN)) return;
      this.delay = 500;
      clearTimeout(this.timer);
      this.connect();
    });
    this.connect();
  }

  connect() {
    if (this.closed) return;
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    let ws;
    try {
      ws = new WebSocket(`${proto}//${location.host}/api/ws`);
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => { this.delay = 500; this.onState(true); };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg && typeof msg.type === 'string') this.onMessage(msg.type, msg.data || {}, msg);
    };
    ws.onclose = () => { this.onState(false); this.retry(); };
    ws.onerror = () => { /* onclose follows and reconnects */ };
  }

  retry() {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), this.delay);
    this.delay = Math.min(this.delay * 2, 15000);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }
}

/** debounce runs fn at most once per ms milliseconds, after the last call. */
export function debounce(fn, ms) {
  let t = 0;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

/** deliberationOn reads the deliberation flag from a hello/deliberation payload. */
export function deliberationOn(v) {
  if (v && typeof v === 'object') return !!v.on;
  return !!v;
}

/**
 * throttle runs fn at once, then at most once per ms milliseconds while calls keep
 * coming; a call during the quiet time is not lost, it runs when the time is up.
 */
export function throttle(fn, ms) {
  let last = 0;
  let timer = 0;
  return () => {
    const wait = last + ms - Date.now();
    if (wait <= 0 && !timer) {
      last = Date.now();
      fn();
    } else if (!timer) {
      timer = setTimeout(() => {
        timer = 0;
        last = Date.now();
        fn();
      }, Math.max(wait, 0));
    }
  };
}
