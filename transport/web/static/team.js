// Team page (/team/<token>, docs/behaviour.md#after-judging): what a team reads on its
// phone in the hall. Its project and table, whether judging is on and how many judges
// have visited; once the organisers publish, the winners, any prize the team won and
// the feedback judges wrote for it (no judge names). It reads GET /api/team/:token,
// which is throttled per address (a hall's phones often share one), so it asks
// sparingly: every few minutes while shown, and after a websocket event. A `winners`
// event carries the winners, shown at once; the team's own part (its prizes, its
// feedback) follows with the next read, spread over 15 s so that a publish does not
// bring every phone in the hall to the server in the same second.
import { ApiError, h, $, show, LiveSocket } from './lib.js';

const POLL_MS = 150000;
const SPREAD_MS = 15000;
const views = ['#loading', '#view-invalid', '#view-wait', '#view-hidden', '#view-team'];

const m = location.pathname.match(/^\/team\/([^/]+)\/?$/);
const token = m ? m[1] : '';

let timer = 0;
let gone = false; // the link is not valid: nothing more to ask
let lastOK = 0;
let shown = null; // the last answer shown
let pending = false; // winners shown from an event; the team's own part is on its way

function showView(sel) {
  show($(sel), ...views.filter((v) => v !== sel).map((v) => $(v)));
}

// fetchTeam reads the team's view. It does not use lib.js's api() so that it can read
// Retry-After on a 429.
async function fetchTeam() {
  let res;
  try {
    res = await fetch(`/api/team/${encodeURIComponent(token)}`, { headers: { Accept: 'application/json' }, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'network');
  }
  if (!res.ok) {
    const e = new ApiError(res.status, `HTTP ${res.status}`);
    e.retryAfter = Number(res.headers.get('Retry-After')) || 0;
    throw e;
  }
  return res.json();
}

async function refresh() {
  clearTimeout(timer);
  timer = 0;
  if (gone) return;
  if (!token) {
    invalid();
    return;
  }
  let next = POLL_MS;
  try {
    const d = await fetchTeam();
    lastOK = Date.now();
    render(d);
  } catch (e) {
    if (e.status === 404 || e.status === 400) {
      invalid();
      return;
    }
    next = wait(e);
  }
  if (document.visibilityState !== 'hidden') timer = setTimeout(refresh, next);
}

function invalid() {
  gone = true;
  document.title = "This link isn't valid · Podium";
  showView('#view-invalid');
  if (socket) socket.close();
}

// wait says why the page cannot load (keeping what it showed, if anything) and returns
// when to try again.
function wait(e) {
  const ms = e.status === 429 ? Math.max(e.retryAfter * 1000, 20000) : e.status === 0 ? 15000 : 30000;
  const why = e.status === 429
    ? 'Many people are opening this page from the same network.'
    : e.status === 0 ? 'Your phone cannot reach the event server.' : 'The event server had a problem.';
  if (shown) {
    $('#updated').textContent = `${why} Showing what we had at ${clock(lastOK)}; trying again shortly.`;
    return ms;
  }
  $('#wait-text').textContent = `${why} This page tries again by itself in ${Math.round(ms / 1000)} seconds.`;
  showView('#view-wait');
  return ms;
}

const clock = (t) => new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

function ordinal(n) {
  const s = ['th', 'st', 'nd', 'rd'];
  const v = n % 100;
  return `${n}${s[(v - 20) % 10] || s[v] || s[0]}`;
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

function render(d) {
  shown = d;
  pending = false;
  const event = d.event_name || 'Podium';
  $('#event-name').textContent = event;
  document.title = `${d.name || 'Your project'} · ${event}`;
  if (d.active === false) {
    $('#hidden-name').textContent = d.name || '';
    showView('#view-hidden');
    return;
  }
  $('#project-name').textContent = d.name || '';
  $('#project-table').textContent = d.location ?? '';
  renderJudging(d);
  renderResults(d);
  renderFeedback(d);
  $('#updated').textContent = `Updated ${clock(lastOK)}. This page updates by itself.`;
  showView('#view-team');
}

function renderJudging(d) {
  const n = Number(d.visits) || 0;
  let icon = '';
  let text = '';
  if (d.judging === 'not started') {
    icon = '○';
    text = "Judging hasn't started yet. Get your demo ready!";
  } else if (d.judging === 'in progress') {
    icon = '●';
    text = n ? `Judges are visiting: ${plural(n, 'visit', 'visits')} so far.` : 'Judges are visiting. None at your table yet: stay close to it.';
  } else {
    icon = '✓';
    text = n ? `Judging is over: ${plural(n, 'judge visit', 'judge visits')} in all. Thank you for showing your project!` : 'Judging is over. Thank you for showing your project!';
  }
  $('#judging-icon').textContent = icon;
  $('#judging-text').textContent = text;
  $('#judging').dataset.state = d.judging || '';
}

const isMine = (d, w) => w.name === d.name && String(w.location) === String(d.location);

// projectName is a winner's name, a link to its project page when it has one.
function projectName(w) {
  if (typeof w.url !== 'string' || !/^https?:\/\//i.test(w.url)) return w.name;
  return h('a', { href: w.url, target: '_blank', rel: 'noopener noreferrer' }, w.name);
}

function renderResults(d) {
  const prizes = Array.isArray(d.winners) ? d.winners : [];
  $('#results-wait').hidden = !!d.published;
  if (!d.published) {
    $('#won').hidden = true;
    $('#won').replaceChildren();
    $('#winners').replaceChildren();
    return;
  }
  const won = Array.isArray(d.prizes_won) ? d.prizes_won : [];
  const places = new Map(prizes.map((p) => [p.name, (p.winners || []).length]));
  $('#won').hidden = won.length === 0;
  $('#won').replaceChildren(...(won.length ? [
    h('p', { class: 'won-title' }, h('span', { 'aria-hidden': 'true' }, '★ '), 'Congratulations!'),
    h('ul', {}, won.map((w) => h('li', {}, places.get(w.prize) > 1 || w.place > 1
      ? `Your project won ${ordinal(w.place)} place in “${w.prize}”.`
      : `Your project won “${w.prize}”.`))),
  ] : []));
  const blocks = prizes.map((p) => h('section', { class: 'prize' },
    h('h3', {}, p.name, p.track ? h('span', { class: 'hint prize-track' }, ` · ${p.track} track`) : null),
    h('ol', { class: 'prize-winners' }, (p.winners || []).map((w) => {
      const mine = isMine(d, w);
      return h('li', { class: mine ? 'mine' : null },
        h('span', { class: 'place' }, ordinal(w.place)),
        h('span', { class: 'who' }, projectName(w), mine ? h('span', { class: 'pill you' }, 'You') : null,
          h('span', { class: 'hint' }, ` · Table ${w.location}`)));
    }))));
  if (!blocks.length) blocks.push(h('p', { class: 'muted' }, 'The results are out, with no prizes listed.'));
  else if (!won.length) blocks.unshift(h('p', { class: 'muted' }, 'The results are out. Thank you for taking part!'));
  $('#winners').replaceChildren(...blocks);
}

// renderFeedback shows the judges' feedback once the results are out. The server sends
// feedback only when the organisers share it; feedback_shared, when the server says so,
// tells "not shared" from "shared, none written"; without it an absent list means not
// shared.
function renderFeedback(d) {
  const box = $('#feedback');
  box.hidden = !d.published;
  if (!d.published) {
    $('#feedback-list').replaceChildren();
    return;
  }
  if (pending) {
    box.hidden = true; // what the judges wrote comes with the next read
    return;
  }
  const items = Array.isArray(d.feedback) ? d.feedback.filter((f) => typeof f === 'string' && f.trim()) : [];
  const shared = typeof d.feedback_shared === 'boolean' ? d.feedback_shared : Array.isArray(d.feedback);
  $('#feedback-list').replaceChildren(...items.map((f) => h('li', {}, h('blockquote', {}, f))));
  $('#feedback-intro').hidden = !(shared && items.length);
  $('#feedback-none').hidden = !(shared && !items.length);
  $('#feedback-off').hidden = shared || items.length > 0;
}

// ---------- staying up to date ----------

// soon refreshes after a random short wait, so that a publish does not bring every
// team's phone to the server in the same instant.
function soon(maxMs = 3000) {
  if (gone) return;
  clearTimeout(timer);
  timer = setTimeout(refresh, Math.random() * maxMs);
}

let socket = null;
let connected = false;

// fromEvent shows the winners a `winners` event carries at once, with the team's prizes
// found among them, until the next read brings the team's own view.
function fromEvent(w) {
  if (!shown || shown.active === false || !w || typeof w.published !== 'boolean') return;
  const prizes = w.published && Array.isArray(w.prizes) ? w.prizes : [];
  const won = [];
  for (const p of prizes) {
    for (const x of p.winners || []) if (isMine(shown, x)) won.push({ prize: p.name, place: x.place });
  }
  const d = { ...shown, published: w.published, winners: prizes, prizes_won: won, feedback: [], feedback_shared: false };
  render(d);
  pending = w.published;
  renderFeedback(d);
}

function onMessage(type, data) {
  if (type === 'winners') {
    fromEvent(data);
    soon(SPREAD_MS);
  }
  else if (type === 'clock' || type === 'deliberation') soon(5000);
  else if (type === 'hello' && connected) soon(5000); // a reconnect: something may have changed meanwhile
  if (type === 'hello') connected = true;
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && !gone) soon(500);
  else clearTimeout(timer);
});

refresh();
if (token) socket = new LiveSocket(onMessage);
