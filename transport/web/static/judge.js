// Judge app: login (code or QR join), welcome, the live connection and the outbox that
// keeps every action on the phone until the server has it. The visit itself is in
// visit.js, the judge's projects and ranking in ranking.js (docs/behaviour.md#judge-app).
import { api, h, $, show, toast, LiveSocket, deliberationOn, groupName } from './lib.js';
import { S, useJudge, load, save, loadMe, saveMe, storageName } from './store.js';
import { Outbox } from './queue.js';
import { acknowledged, loadJudged, renderJudged } from './ranking.js';
import { nextProject, reconcile, showInner, showStatus, showUndo, updatePausedNotice } from './visit.js';

const views = ['#view-login', '#view-join', '#view-joined', '#view-app'].map((s) => $(s));

function showOnly(sel) {
  $('#loading').hidden = true;
  show($(sel), ...views.filter((v) => v !== $(sel)));
}

// The app shell is kept on the phone so the app opens without a network. Browsers
// allow a service worker only on https or localhost: on plain http over a LAN there is
// none, and the judge is told not to reload while offline (docs/behaviour.md#trust-on-the-floor).
let noShell = !('serviceWorker' in navigator);
if (!noShell) {
  navigator.serviceWorker.register('/sw.js').catch(() => {
    noShell = true;
    updateOffline();
  });
}

// ---------- boot ----------

async function boot() {
  const params = new URLSearchParams(location.search);
  if (location.pathname === '/join') {
    setupJoin(params.get('code') || '', params.get('track') || '');
    return;
  }
  const code = params.get('code');
  if (code) {
    history.replaceState(null, '', '/');
    await login(code);
    return;
  }
  try {
    S.judge = await api('GET', '/api/judge');
  } catch (e) {
    const me = loadMe();
    if (e.status === 0 && me) {
      S.judge = me; // no network: open with what the phone kept
    } else if (e.status === 401 || e.status === 0) {
      showOnly('#view-login');
      $('#login-code').focus();
      return;
    } else {
      showError(e);
      return;
    }
  }
  await startApp();
}

function showError(e) {
  showOnly('#view-login');
  const el = $('#login-error');
  el.textContent = e.message;
  el.hidden = false;
}

// ---------- login and join ----------

async function login(typed, joined = false) {
  const err = $('#login-error');
  err.hidden = true;
  // Codes are read out and typed in groups ("7970 5407"): spaces are not part of them.
  const code = typed.replace(/\s+/g, '');
  try {
    await api('POST', '/api/judge/login', { code });
    S.judge = await api('GET', '/api/judge');
  } catch (e) {
    showOnly('#view-login');
    err.textContent = e.status === 400 || e.status === 401 ? 'That code is not valid. Check your email and try again.' : e.message;
    err.hidden = false;
    $('#login-code').value = typed;
    $('#login-code').focus();
    return false;
  }
  if (joined) await showJoinedCode(code);
  await startApp();
  return true;
}

$('#login-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const code = $('#login-code').value.trim();
  if (!code) {
    const err = $('#login-error');
    err.textContent = 'Please enter your login code.';
    err.hidden = false;
    return;
  }
  login(code);
});

function setupJoin(code, track) {
  showOnly('#view-join');
  $('#join-track-note').textContent = track
    ? `You are joining as a judge for the “${track}” track.`
    : 'Enter your name and email to start judging right away.';
  const err = $('#join-error');
  if (!code) {
    err.textContent = 'This join link has no code. Scan the QR code again or ask an organiser.';
    err.hidden = false;
  }
  $('#join-name').focus();
  $('#join-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.hidden = true;
    const name = $('#join-name').value.trim();
    const email = $('#join-email').value.trim();
    if (!name || !email) {
      err.textContent = 'Please enter your name and email.';
      err.hidden = false;
      return;
    }
    const body = { name, email, notes: $('#join-notes').value.trim(), code };
    if (track) body.track = track;
    let res;
    try {
      res = await api('POST', '/api/qr/add', body);
    } catch (e) {
      err.textContent = e.status === 401 ? 'This QR code is no longer valid. Ask an organiser for the current one.'
        : e.status === 409 ? 'A judge with this email already exists. Use the login code from your email.'
          : e.message;
      err.hidden = false;
      return;
    }
    history.replaceState(null, '', '/');
    await login(String(res.code), true);
  });
}

// showJoinedCode shows a judge who just signed up by QR its login code, once, with a
// line to keep it (docs/behaviour.md#trust-on-the-floor); the app starts when the
// judge says it has kept it.
function showJoinedCode(code) {
  showOnly('#view-joined');
  $('#joined-code').textContent = code.length === 8 ? `${code.slice(0, 4)} ${code.slice(4)}` : code;
  $('#joined-title').focus();
  return new Promise((resolve) => {
    $('#joined-ok').addEventListener('click', () => resolve(), { once: true });
  });
}

$('#logout').addEventListener('click', async () => {
  try { await api('POST', '/api/judge/logout'); } catch { /* logged out anyway */ }
  saveMe(null);
  location.href = '/';
});

// ---------- app ----------

// loadEnv reads the event's settings, or the copy the phone kept when offline.
async function loadEnv() {
  const env = load('env', {});
  const [gi, timer, delib] = await Promise.allSettled([
    api('GET', '/api/group-info'),
    api('GET', '/api/admin/timer'),
    api('GET', '/api/judge/deliberation'),
  ]);
  if (gi.status === 'fulfilled' && gi.value) env.groupInfo = gi.value;
  if (timer.status === 'fulfilled' && timer.value) env.timer = Number(timer.value.judging_timer) || 0;
  if (delib.status === 'fulfilled' && delib.value) env.deliberation = delib.value.ok === 1;
  save('env', env);
  if (env.groupInfo) S.groupInfo = env.groupInfo;
  S.timer = env.timer || 0;
  S.deliberation = !!env.deliberation;
  eventTitle(S.groupInfo);
}

async function startApp() {
  useJudge(S.judge.id);
  saveMe(S.judge);
  showOnly('#view-app');
  $('#logout').hidden = false;
  $('#who').textContent = S.judge.name;
  $('#welcome-name').textContent = S.judge.name;
  if (!S.outbox) listen(); // once per page: a second login (session ended) reuses them
  else if (S.socket.ws) S.socket.ws.close(); // it reconnects with the new session
  syncStatus(S.outbox.items().length, 'idle');
  renderRefused();
  await loadEnv();
  renderJudged();
  updateOffline();
  loadJudged();
  S.outbox.kick(true);
  if (!S.judge.read_welcome) {
    showInner('#view-welcome');
    $('#welcome-ok').focus();
    return;
  }
  await nextProject();
  showUndo();
}

$('#welcome-ok').addEventListener('click', async () => {
  S.outbox.add('welcome', 'PUT', '/api/judge/welcome', undefined, { label: 'reading the welcome' });
  S.judge.read_welcome = true;
  saveMe(S.judge);
  await nextProject();
});

// listen sets up the outbox and the live connection.
function listen() {
  S.outbox = new Outbox({ changed: syncStatus, done: onDone, refused: onRefused, drained: resync });
  window.addEventListener('storage', (ev) => {
    if (ev.key === storageName('queue')) { syncStatus(S.outbox.items().length, S.outbox.state); renderJudged(); }
    if (ev.key === storageName('deferred')) syncStatus(S.outbox.items().length, S.outbox.state);
  });
  window.addEventListener('online', updateOffline);
  window.addEventListener('offline', updateOffline);
  S.socket = new LiveSocket(onMessage, (up) => {
    S.socketUp = up;
    updateOffline();
    if (up) S.outbox.kick(true);
  });
}

// ---------- where things stand ----------

function updateOffline() {
  const offline = !navigator.onLine;
  const el = $('#notice-offline');
  const keep = noShell ? ' Do not reload this page until the connection is back.' : '';
  el.textContent = (offline
    ? 'You are offline. Keep judging: what you do is kept on this phone and sent when the connection is back.'
    : 'Live connection lost, reconnecting… What you do is kept on this phone meanwhile.') + keep;
  el.hidden = !offline && S.socketUp;
  $('#notice-nosw').hidden = !noShell;
}

// syncStatus says what has not reached the server yet: the outbox's n actions, and
// skips kept on the phone until the server sends the judge that project; "✓ All
// saved" only when there is neither (docs/behaviour.md#judge-app).
function syncStatus(n, state) {
  const el = $('#sync');
  const what = n === 1 ? '1 action' : `${n} actions`;
  let text = ''; // nothing waits
  if (n > 0 && state === 'auth') text = `${what} waiting to send: log in again to send them.`;
  else if (n > 0 && state === 'sending') text = `Sending ${what}…`;
  else if (n > 0) text = `${what} waiting to send`;
  const skips = deferredSkips();
  if (skips.length) {
    const said = skips.length === 1
      ? `1 skip waits until the server sends you ${skips[0]}`
      : `${skips.length} skips wait until the server sends you ${skips.join(', ')}`;
    text = text ? `${text}; ${said[0].toLowerCase()}${said.slice(1)}` : said;
  }
  el.textContent = text || '✓ All saved';
  el.classList.toggle('pending', !!text);
  if (state === 'auth') showLoginAgain();
}

// deferredSkips names the skips kept on the phone (visit.js: skips of projects the
// server had not sent the judge to).
function deferredSkips() {
  return Object.entries(load('deferred', {})).map(([, d]) => (d && d.name ? `“${d.name}”` : 'that project'));
}

// showLoginAgain asks for the code again when the session ended (a login on another
// device replaces it); the waiting actions stay and go out after the login.
function showLoginAgain() {
  if (!$('#view-login').hidden) return;
  showOnly('#view-login');
  const el = $('#login-error');
  el.textContent = 'Your session ended (did you log in on another device?). Log in again: your waiting actions are kept and sent after.';
  el.hidden = false;
  $('#login-code').focus();
}

function onDone(a) {
  acknowledged(a);
  if (a.kind === 'undo') toast(`Your visit to “${a.meta.project.name}” was taken back.`);
}

// onRefused records an action the server refused: the judge is told in plain words,
// with the notes it would otherwise lose.
function onRefused(a, status, message) {
  if (a.kind === 'finish') {
    const id = a.meta.id;
    S.outbox.rewrite('rank', (b) => ({ ranking: b.ranking.filter((x) => x !== id) }));
    const u = load('undo', null);
    if (u && u.key === a.key) {
      save('undo', undefined); // nothing left to undo
      showUndo();
    }
  }
  const list = load('refused', []);
  list.push({ label: a.meta.label || a.kind, message, notes: a.kind === 'finish' ? a.body.notes : '', feedback: a.kind === 'finish' || a.kind === 'feedback' ? a.body.feedback || '' : '', at: Date.now() });
  save('refused', list);
  renderRefused();
}

function renderRefused() {
  const list = load('refused', []);
  const box = $('#refused');
  box.hidden = list.length === 0;
  if (!list.length) return;
  box.replaceChildren(
    h('strong', {}, list.length === 1 ? 'One action could not be saved:' : `${list.length} actions could not be saved:`),
    h('ul', {}, list.map((r) => h('li', {}, `${r.label[0].toUpperCase()}${r.label.slice(1)}: ${r.message}`,
      r.notes ? h('span', { class: 'refused-notes' }, `Your notes: ${r.notes}`) : null,
      r.feedback ? h('span', { class: 'refused-notes' }, `Your feedback for the team: ${r.feedback}`) : null))),
    h('button', { type: 'button', class: 'small', onclick: () => { save('refused', undefined); renderRefused(); } }, 'OK'),
  );
}

// resync re-reads the judge once the outbox is empty (or after a reconnect): the
// server's answer decides what is current.
async function resync() {
  if (!S.judge || S.busy || S.outbox.items().length) return;
  let me;
  try { me = await api('GET', '/api/judge'); } catch { return; }
  S.judge = { ...S.judge, ...me };
  saveMe(S.judge);
  loadJudged();
  if (!S.judge.read_welcome) return;
  reconcile(me.current || null);
}

// ---------- live updates ----------

/** eventTitle puts options.event_name into the page title and the header. */
function eventTitle(gi) {
  if (!gi || !gi.event_name) return;
  document.title = `Judging · ${gi.event_name}`;
  $('#event-name').textContent = gi.event_name;
}

// The event's name shows on the login page too.
api('GET', '/api/group-info').then(eventTitle, () => {});

function onMessage(type, d) {
  switch (type) {
    case 'hello':
      if (d.clock) S.running = !!d.clock.running;
      if ('deliberation' in d) S.deliberation = deliberationOn(d.deliberation);
      if (d.group_info) { S.groupInfo = d.group_info; eventTitle(d.group_info); }
      if (typeof d.group === 'number' && S.judge) S.judge.group = d.group;
      resync();
      break;
    case 'clock': {
      const was = S.running;
      S.running = !!d.running;
      updatePausedNotice();
      if (S.running && !was && !S.project && S.reason === 'paused') nextProject();
      break;
    }
    case 'deliberation':
      S.deliberation = deliberationOn(d);
      save('env', { ...load('env', {}), deliberation: S.deliberation });
      renderJudged();
      if (S.deliberation) showStatus('deliberation');
      else nextProject();
      break;
    case 'group_info':
      S.groupInfo = d;
      eventTitle(d);
      save('env', { ...load('env', {}), groupInfo: d });
      break;
    case 'judge':
      if (typeof d.group === 'number' && S.judge && d.group !== S.judge.group) groupMoved(d.group);
      reconcile(d.current || null);
      break;
    default:
  }
}

function groupMoved(g) {
  S.judge.group = g;
  const n = $('#notice-group');
  n.replaceChildren(
    `You have been moved to ${groupName(S.groupInfo, g)}. `,
    h('button', { type: 'button', class: 'small', onclick: () => { n.hidden = true; } }, 'OK'),
  );
  n.hidden = false;
}

// ---------- views ----------

$('#status-retry').addEventListener('click', () => { S.outbox.kick(true); nextProject(); });
$('#nav-judge').addEventListener('click', () => switchView('judge'));
$('#nav-list').addEventListener('click', () => switchView('list'));

function switchView(v) {
  S.view = v;
  $('#nav-judge').setAttribute('aria-current', v === 'judge' ? 'page' : 'false');
  $('#nav-list').setAttribute('aria-current', v === 'list' ? 'page' : 'false');
  $('#judging').hidden = v !== 'judge';
  $('#view-list').hidden = v !== 'list';
  if (v === 'list') loadJudged();
}

boot();
