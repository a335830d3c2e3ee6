// The judge app's outbox (docs/behaviour.md#judge-app): every write gets its
// Idempotency-Key on the phone and waits in localStorage until the server has answered
// it. Actions go out one at a time, in order; a network error, a timeout or a 5xx/429
// answer leaves the action at the head of the queue and tries again with back-off (the
// same key, so the server applies it once); any other answer takes it off the queue
// (2xx: done, 4xx: refused, shown to the judge in plain words).
import { load, save } from './store.js';

const TIMEOUT_MS = 15000;
const MAX_DELAY_MS = 15000;

/** newKey returns a random idempotency key (crypto.randomUUID needs a secure context). */
export function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

async function send(a) {
  const init = {
    method: a.method,
    credentials: 'same-origin',
    headers: { Accept: 'application/json', 'Idempotency-Key': a.key },
  };
  if (a.body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(a.body);
  }
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
  try {
    const res = await fetch(a.path, { ...init, signal: ctl.signal });
    const text = await res.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch { body = null; }
    return { status: res.status, body };
  } finally {
    clearTimeout(timer);
  }
}

// Run fn holding a lock shared by every tab of the app, so two tabs never send the same
// queue at once.
function withLock(fn) {
  if (navigator.locks) return navigator.locks.request('podium-outbox', fn);
  return fn();
}

/**
 * Outbox sends queued actions. hooks: changed(count, state) whenever the queue or its
 * state changes (state: idle, sending, waiting, auth); done(action, body) after a 2xx;
 * refused(action, status, message) after a 4xx; drained() when the queue became empty.
 */
export class Outbox {
  constructor(hooks) {
    this.hooks = hooks;
    this.state = 'idle';
    this.delay = 1000;
    this.timer = 0;
    this.inflight = '';
    this.running = false;
    this.again = false;
    this.waiters = [];
    window.addEventListener('online', () => this.kick(true));
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.kick(true);
    });
  }

  /** items is the queue as stored, oldest first. */
  items() {
    return load('queue', []);
  }

  setState(s) {
    this.state = s;
    this.hooks.changed(this.items().length, s);
  }

  /**
   * add queues a write: kind names it (finish, skip, rank, star, notes, undo, welcome),
   * meta carries what the screen needs to describe it. A new ranking replaces rankings
   * still waiting (not the one being sent): only the latest order matters, and it goes
   * after every finish it names.
   */
  add(kind, method, path, body, meta = {}) {
    const a = { key: newKey(), kind, method, path, body, meta, at: Date.now() };
    let q = this.items();
    if (kind === 'rank') q = q.filter((x) => x.kind !== 'rank' || x.key === this.inflight);
    q.push(a);
    save('queue', q);
    this.setState(this.state);
    this.kick(true);
    return a;
  }

  /** remove takes a waiting action off the queue; false when it is being sent. */
  remove(key) {
    if (key === this.inflight) return false;
    const q = this.items();
    const rest = q.filter((x) => x.key !== key);
    if (rest.length === q.length) return false;
    save('queue', rest);
    this.setState(this.state);
    return true;
  }

  /** rewrite changes the bodies of waiting actions of a kind (not the one being sent). */
  rewrite(kind, fn) {
    const q = this.items().map((x) => (x.kind === kind && x.key !== this.inflight ? { ...x, body: fn(x.body) } : x));
    save('queue', q);
  }

  /** kick sends the queue now (reset: forget the back-off, the network is back). */
  kick(reset = false) {
    if (reset) this.delay = 1000;
    clearTimeout(this.timer);
    this.timer = 0;
    this.flush();
  }

  async flush() {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        clearTimeout(this.timer);
        this.timer = 0;
        await withLock(() => this.sendAll());
      } while (this.again);
    } finally {
      this.running = false;
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** settle resolves once the sending under way (if any) has stopped. */
  settle() {
    return this.running ? new Promise((r) => this.waiters.push(r)) : Promise.resolve();
  }

  /** moving says whether a waiting action changes the judge's current project. */
  moving() {
    return this.items().some((a) => a.kind === 'finish' || a.kind === 'skip' || a.kind === 'undo');
  }

  async sendAll() {
    for (;;) {
      const a = this.items()[0];
      if (!a) {
        if (this.state !== 'idle') {
          this.setState('idle');
          this.hooks.drained();
        }
        return;
      }
      this.inflight = a.key;
      this.setState('sending');
      let res;
      try {
        res = await send(a);
      } catch {
        res = { status: 0, body: null };
      } finally {
        this.inflight = '';
      }
      if (res.status === 401) {
        this.setState('auth'); // kept until the judge logs in again
        return;
      }
      if (res.status === 0 || res.status >= 500 || res.status === 429 || res.status === 408) {
        this.retryLater();
        return;
      }
      this.delay = 1000;
      save('queue', this.items().filter((x) => x.key !== a.key));
      if (res.status < 300) this.hooks.done(a, res.body);
      else this.hooks.refused(a, res.status, (res.body && res.body.error) || `HTTP ${res.status}`);
    }
  }

  retryLater() {
    this.setState('waiting');
    const jitter = 1 + Math.random() * 0.2;
    this.timer = setTimeout(() => { this.timer = 0; this.flush(); }, this.delay * jitter);
    this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
  }
}
