// Admin dashboard: live stats, clock and log over the websocket (no polling), judges and
// projects tables, imports, flags, options, QR codes, exports, backup, coverage chart.
import {
  api, upload, h, $, show, toast, fmtClock, groupName, LiveSocket, throttle, deliberationOn,
} from './lib.js';
import { dialog } from './dialog.js';

const A = {
  stats: null,
  published: false, // results are published (winners.js says so)
  clock: { running: false, time: 0 },
  clockAt: Date.now(),
  deliberation: false,
  options: null,
  groupInfo: { names: [], enabled: false },
  judges: [],
  projects: [],
  flags: [],
  logLines: [],
  socket: null,
};

const MAX_LOG_LINES = 2000;

// ---------- boot and login ----------

async function boot() {
  try {
    await api('POST', '/api/admin/auth');
  } catch {
    $('#loading').hidden = true;
    show($('#view-login'));
    $('#login-password').focus();
    return;
  }
  startDash();
}

$('#login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const err = $('#login-error');
  err.hidden = true;
  try {
    await api('POST', '/api/admin/login', { password: $('#login-password').value });
  } catch (e) {
    err.textContent = e.status === 400 || e.status === 401 ? 'Wrong password.' : e.message;
    err.hidden = false;
    return;
  }
  $('#login-password').value = '';
  startDash();
});

$('#logout').addEventListener('click', async () => {
  try { await api('POST', '/api/admin/logout'); } catch { /* gone anyway */ }
  location.reload();
});

function startDash() {
  $('#loading').hidden = true;
  $('#view-login').hidden = true;
  $('#view-dash').hidden = false;
  $('#logout').hidden = false;
  A.socket = new LiveSocket(onMessage, (up) => {
    $('#live').textContent = up ? 'live' : 'offline';
    if (up) refreshAll(); // catch up on anything missed while disconnected
    if (up) window.dispatchEvent(new CustomEvent('podium:ws', { detail: { type: 'resync', data: {} } }));
  });
  setInterval(renderClock, 1000); // local display tick; the values come from the socket
  refreshAll();
}

function refreshAll() {
  loadStats();
  loadClock();
  loadOptions();
  loadJudges();
  loadProjects();
  loadFlags();
  loadLog();
}

// sessionEnded sends the organiser back to the login form when the session is gone.
function sessionEnded(e) {
  if (e && e.status === 401 && !$('#view-dash').hidden) {
    location.reload();
    return true;
  }
  return false;
}

async function quiet(p) {
  try { return await p; } catch (e) {
    if (!sessionEnded(e) && e.status !== 404) toast(e.message, true);
    return null;
  }
}

// ---------- tabs ----------

const tabs = [...document.querySelectorAll('[role=tab]')];
function selectTab(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute('aria-selected', on ? 'true' : 'false');
    t.tabIndex = on ? 0 : -1;
    $(`#${t.getAttribute('aria-controls')}`).hidden = !on;
  }
  if (tab.id === 'tab-data') loadQR();
  if (tab.id === 'tab-log') scrollLog(true);
}
for (const t of tabs) {
  t.addEventListener('click', () => selectTab(t));
  t.addEventListener('keydown', (ev) => {
    const i = tabs.indexOf(t);
    let j = -1;
    if (ev.key === 'ArrowRight') j = (i + 1) % tabs.length;
    if (ev.key === 'ArrowLeft') j = (i - 1 + tabs.length) % tabs.length;
    if (ev.key === 'Home') j = 0;
    if (ev.key === 'End') j = tabs.length - 1;
    if (j >= 0) {
      ev.preventDefault();
      selectTab(tabs[j]);
      tabs[j].focus();
    }
  });
}

// ---------- dialogs (confirm / prompt / info): dialog.js ----------

const confirmDanger = (title, text, okText) => dialog(title, h('p', {}, text), { okText, danger: true });

async function promptNumber(title, label, value, min, max) {
  const input = h('input', { type: 'number', id: 'dialog-input', min, max, value: String(value ?? '') });
  const ok = await dialog(title, [h('label', { for: 'dialog-input' }, label), input]);
  if (!ok || input.value === '') return null;
  return Number(input.value);
}

async function promptGroup(title) {
  const names = A.options ? A.options.group_names : [];
  const n = A.options ? A.options.num_groups : names.length;
  const sel = h('select', { id: 'dialog-input' });
  for (let i = 0; i < n; i++) sel.append(h('option', { value: String(i) }, groupName({ names }, i)));
  const ok = await dialog(title, [h('label', { for: 'dialog-input' }, 'Group'), sel]);
  return ok ? Number(sel.value) : null;
}

async function run(p, okMsg) {
  try {
    const r = await p;
    if (okMsg) toast(okMsg);
    return r ?? true;
  } catch (e) {
    if (!sessionEnded(e)) toast(e.message, true);
    return null;
  }
}

// ---------- stats, clock, deliberation ----------

async function loadStats() {
  const s = await quiet(api('GET', '/api/admin/stats'));
  if (s) renderStats(s);
}

function renderStats(s) {
  A.stats = s;
  $('#stat-projects').textContent = s.projects ?? '–';
  $('#stat-judges').textContent = s.judges ?? '–';
  renderAverages();
}

// renderAverages shows the average views to two decimals (the stats route rounds them
// to whole numbers, as Jury's types do), from the lists: active projects' views and
// active general judges' views.
function renderAverages() {
  renderJudgeCount();
  const avg = (xs) => (xs.length ? (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2) : '–');
  $('#stat-avg-project').textContent = avg(A.projects.filter((p) => p.active).map((p) => p.seen));
  const general = (j) => !j.track || !(A.options && A.options.judge_tracks);
  $('#stat-avg-judge').textContent = avg(A.judges.filter((j) => j.active && general(j)).map((j) => j.seen));
}

// renderJudgeCount says what "Active general judges" leaves out (the stats route counts
// active general judges only): track judges and hidden judges, out of all judges.
function renderJudgeCount() {
  if (!A.judges.length) { $('#stat-judges-note').textContent = ''; return; }
  const tracks = !!(A.options && A.options.judge_tracks);
  const track = A.judges.filter((j) => j.active && j.track && tracks).length;
  const hidden = A.judges.filter((j) => !j.active).length;
  const parts = [];
  if (track) parts.push(`${track} track judge${track === 1 ? '' : 's'}`);
  if (hidden) parts.push(`${hidden} hidden`);
  $('#stat-judges-note').textContent = `of ${A.judges.length} judge${A.judges.length === 1 ? '' : 's'}` + (parts.length ? ` (not counted: ${parts.join(', ')})` : '');
}

async function loadClock() {
  const c = await quiet(api('GET', '/api/admin/clock'));
  if (c) setClock(c);
}

function setClock(c) {
  A.clock = { running: !!c.running, time: Number(c.time) || 0 };
  A.clockAt = Date.now();
  renderClock();
}

function renderClock() {
  const t = A.clock.time + (A.clock.running ? Date.now() - A.clockAt : 0);
  $('#clock').textContent = fmtClock(t);
  const st = $('#clock-state');
  st.textContent = A.clock.running ? 'running' : 'paused';
  st.className = A.clock.running ? 'pill ok-state' : 'pill hidden-state';
  // Only the button that can act is shown: Start/Resume while paused, Pause while running.
  $('#clock-start').hidden = A.clock.running;
  $('#clock-pause').hidden = !A.clock.running;
  $('#clock-start').textContent = A.clock.time >= 1000 ? 'Resume' : 'Start';
  renderPauseBanner(t);
}

// renderPauseBanner says loudly, on every tab, that judging is not running: judges are
// told "Judging is paused" and get no projects until the clock runs.
function renderPauseBanner(t) {
  const b = $('#pause-banner');
  b.hidden = A.clock.running;
  if (A.clock.running) return;
  let text;
  if (A.published) text = 'Results are published: judging is over, and the screens, the website and team pages show the winners.';
  else if (A.deliberation) text = 'Deliberation is on: judging is closed and the clock is paused.';
  else if (t < 1000) text = 'Judging has not started: judges see "Judging is paused" and get no projects until you press Start.';
  else text = `Judging is paused at ${fmtClock(t)}: judges see "Judging is paused" and get no projects until you press Resume.`;
  $('#pause-text').textContent = text;
  $('#pause-resume').hidden = A.deliberation || A.published;
  $('#pause-resume').textContent = t < 1000 ? 'Start judging' : 'Resume judging';
}
$('#pause-resume').addEventListener('click', () => clockCmd('unpause'));
// winners.js says whether results are published (the banner then says judging is over).
window.addEventListener('podium:published', (ev) => {
  if (A.published === ev.detail) return;
  A.published = ev.detail;
  renderClock();
});

async function clockCmd(what) {
  const r = await run(api('POST', `/api/admin/clock/${what}`));
  if (r && r.clock) {
    // The socket's clock message carries the elapsed time; fetch it now for a snappy UI.
    loadClock();
  }
}
$('#clock-start').addEventListener('click', () => clockCmd('unpause'));
$('#clock-pause').addEventListener('click', () => clockCmd('pause'));
$('#clock-reset').addEventListener('click', async () => {
  if (await confirmDanger('Reset the clock?', 'The judging clock goes back to 0:00:00 and stops.', 'Reset clock')) clockCmd('reset');
});

function setDeliberation(on) {
  A.deliberation = on;
  const b = $('#deliberation');
  b.setAttribute('aria-pressed', on ? 'true' : 'false');
  b.textContent = on ? 'End deliberation' : 'Start deliberation';
  b.className = on ? 'danger' : '';
  renderClock();
}
$('#deliberation').addEventListener('click', async () => {
  const start = !A.deliberation;
  if (start && !(await confirmDanger('Start deliberation?', 'Judges can no longer finish, rank or star projects, and the clock pauses.', 'Start deliberation'))) return;
  const r = await run(api('POST', '/api/admin/deliberation', { start }));
  if (r) setDeliberation(start);
});

// ---------- websocket ----------

// Lists are refetched when the socket says they changed, at most once a second each
// (a busy expo changes them many times a second; the last change is never missed).
const refetch = {
  judge: throttle(() => loadJudges(), 1000),
  project: throttle(() => loadProjects(), 1000),
  options: throttle(() => loadOptions(), 500),
  flags: throttle(() => loadFlags(), 500),
};

function onMessage(type, d) {
  // content.js and reset.js follow the same socket.
  window.dispatchEvent(new CustomEvent('podium:ws', { detail: { type, data: d } }));
  switch (type) {
    case 'hello':
      if (d.clock) setClock(d.clock);
      if ('deliberation' in d) setDeliberation(deliberationOn(d.deliberation));
      if (d.group_info) A.groupInfo = d.group_info;
      break;
    case 'clock':
      setClock(d);
      break;
    case 'deliberation':
      setDeliberation(deliberationOn(d));
      break;
    case 'group_info':
      A.groupInfo = d;
      if (d.event_name) setEventName(d.event_name);
      renderCoverage();
      judgeTable.render(); // the Group column follows multi_group
      projectTable.render();
      break;
    case 'stats':
      renderStats(d);
      // Views moved: the coverage chart and the tables follow.
      refetch.project();
      refetch.judge();
      break;
    case 'changed':
      if (d.kind === 'judge') refetch.judge();
      else if (d.kind === 'project') refetch.project();
      else if (d.kind === 'options') refetch.options();
      break;
    case 'flag':
      refetch.flags();
      break;
    case 'log':
      appendLog(d.lines || []);
      break;
    default:
  }
}

// ---------- generic data table ----------

/**
 * DataTable renders rows with sortable columns, a search box, multi-select and bulk
 * actions. columns: {key, label, value(row), render(row)?, num?, cls? (cell class),
 * hidden()? (true leaves the column out)}.
 */
class DataTable {
  constructor(root, { name, columns, search, actions, bulk, rowClass, extraSig }) {
    this.root = root;
    this.name = name;
    this.columns = columns;
    this.searchText = search;
    this.actions = actions;
    this.bulk = bulk;
    this.rowClass = rowClass || (() => '');
    this.extraSig = extraSig || (() => null);
    this.sig = '';
    this.rows = [];
    this.selected = new Set();
    this.sortKey = columns[0].key;
    this.sortDir = 1;
    this.query = '';
    this.limit = 300; // rows drawn at once; "Show all" lifts it
    const searchId = `${name}-search`;
    this.searchInput = h('input', {
      type: 'search', id: searchId, placeholder: name === 'judges' ? 'Name, email, code, track…' : 'Name, table, challenge…',
      oninput: () => { this.query = this.searchInput.value.toLowerCase(); this.render(); },
    });
    this.count = h('span', { class: 'hint', 'aria-live': 'polite' });
    this.bulkBar = h('div', { class: 'row' }, ...bulk.map((b) => h('button', {
      type: 'button', class: b.danger ? 'danger small' : 'small', onclick: () => b.run([...this.selected]),
      dataset: { bulk: b.label.toLowerCase().replace(/[^a-z]/g, '') },
    }, b.label)));
    this.table = h('table', { class: 'data' });
    root.replaceChildren(
      h('div', { class: 'toolbar' },
        h('div', { class: 'grow' }, h('label', { for: searchId }, `Search ${name}`), this.searchInput),
        h('div', {}, h('div', { class: 'hint' }, 'With selected:'), this.bulkBar)),
      this.count,
      h('div', { class: 'table-wrap' }, this.table),
    );
  }

  setRows(rows) {
    this.rows = rows;
    const ids = new Set(rows.map((r) => r.id));
    for (const id of [...this.selected]) if (!ids.has(id)) this.selected.delete(id);
    this.render();
  }

  visible() {
    const col = this.columns.find((c) => c.key === this.sortKey);
    let rows = this.rows;
    if (this.query) rows = rows.filter((r) => this.searchText(r).toLowerCase().includes(this.query));
    return [...rows].sort((a, b) => {
      const x = col.value(a), y = col.value(b);
      if (x < y) return -this.sortDir;
      if (x > y) return this.sortDir;
      return 0;
    });
  }

  render() {
    // Redraw only when something shown changed: a refetch with the same data must not
    // replace the row someone is about to click.
    const sig = JSON.stringify([this.rows, [...this.selected], this.sortKey, this.sortDir, this.query, this.limit, this.extraSig()]);
    if (sig === this.sig) return;
    this.sig = sig;
    const rows = this.visible();
    const allSel = rows.length > 0 && rows.every((r) => this.selected.has(r.id));
    const selAll = h('input', {
      type: 'checkbox', 'aria-label': `Select all matching ${this.name}`, checked: allSel,
      onchange: (ev) => {
        for (const r of rows) {
          if (ev.target.checked) this.selected.add(r.id); else this.selected.delete(r.id);
        }
        this.render();
      },
    });
    const cols = this.columns.filter((c) => !c.hidden || !c.hidden());
    const head = h('tr', {}, h('th', { scope: 'col' }, selAll), ...cols.map((c) => {
      const sorted = c.key === this.sortKey;
      return h('th', { scope: 'col', class: c.num ? 'num' : undefined, 'aria-sort': sorted ? (this.sortDir > 0 ? 'ascending' : 'descending') : 'none' },
        h('button', {
          type: 'button',
          onclick: () => {
            if (this.sortKey === c.key) this.sortDir = -this.sortDir; else { this.sortKey = c.key; this.sortDir = 1; }
            this.render();
          },
        }, c.label, sorted ? (this.sortDir > 0 ? ' ▲' : ' ▼') : ''));
    }), h('th', { scope: 'col' }, 'Actions'));
    const shown = rows.slice(0, this.limit);
    const body = shown.map((r) => {
      const cb = h('input', {
        type: 'checkbox', 'aria-label': `Select ${r.name}`, checked: this.selected.has(r.id),
        onchange: (ev) => {
          if (ev.target.checked) this.selected.add(r.id); else this.selected.delete(r.id);
          this.render();
        },
      });
      const cls = [this.rowClass(r), this.selected.has(r.id) ? 'selected' : ''].join(' ').trim();
      return h('tr', { class: cls || undefined, dataset: { id: r.id } },
        h('td', { 'data-label': 'Select' }, cb),
        ...cols.map((c) => h('td', { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || undefined, 'data-label': c.label },
          c.render ? c.render(r) : String(c.value(r)))),
        h('td', { class: 'actions-cell', 'data-label': 'Actions' }, h('div', { class: 'row' }, ...this.actions(r))));
    });
    this.table.replaceChildren(h('thead', {}, head), h('tbody', {}, ...body));
    const more = rows.length > shown.length
      ? h('button', { type: 'button', class: 'small', onclick: () => { this.limit = Infinity; this.render(); } }, `Show all ${rows.length}`)
      : null;
    this.count.replaceChildren(`${rows.length} of ${this.rows.length} match · ${this.selected.size} selected `, more || '');
    for (const b of this.bulkBar.querySelectorAll('button')) b.disabled = this.selected.size === 0;
  }
}

const groupNames = () => (A.options ? A.options.group_names : A.groupInfo.names);
// Without groups (multi_group off) the tables leave the Group column out.
const groupsOff = () => !(A.options ? A.options.multi_group : A.groupInfo.enabled);
const small = (label, onclick, opts = {}) => h('button', { type: 'button', class: opts.danger ? 'danger small' : 'small', 'aria-label': opts.aria, onclick }, label);
const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : '–');

// ---------- judges ----------

const judgeTable = new DataTable($('#judges-table'), {
  name: 'judges',
  columns: [
    { key: 'name', label: 'Name', cls: 'name-cell', value: (j) => j.name.toLowerCase(), render: (j) => j.name },
    { key: 'email', label: 'Email', cls: 'email', value: (j) => j.email.toLowerCase(), render: (j) => emailParts(j.email) },
    { key: 'code', label: 'Code', value: (j) => j.code, render: (j) => h('span', { class: 'code' }, j.code) },
    { key: 'track', label: 'Track', value: (j) => j.track || '' },
    { key: 'group', label: 'Group', hidden: groupsOff, value: (j) => j.group, render: (j) => groupName(A.options ? { names: A.options.group_names } : A.groupInfo, j.group) },
    { key: 'seen', label: 'Seen', num: true, value: (j) => j.seen },
    { key: 'current', label: 'Current', cls: 'current', value: (j) => currentName(j), render: (j) => currentName(j) || '–' },
    { key: 'active', label: 'Status', value: (j) => (j.active ? 0 : 1), render: (j) => (j.active ? 'active' : h('span', { class: 'pill hidden-state' }, 'hidden')) },
    { key: 'last', label: 'Last activity', value: (j) => j.last_activity, render: (j) => when(j.last_activity) },
    { key: 'mail', label: 'Code email', value: (j) => (j.mail ? j.mail.status : ''), render: mailPill },
  ],
  search: (j) => `${j.name} ${j.email} ${j.code} ${j.track} ${j.notes} ${j.mail ? j.mail.status : ''}`,
  extraSig: () => [groupNames(), groupsOff(), A.projects.map((p) => [p.id, p.name, p.location])],
  rowClass: (j) => (j.active ? '' : 'inactive'),
  actions: (j) => [
    small('Details', () => judgeDetails(j), { aria: `Details of ${j.name}` }),
    small(j.active ? 'Hide' : 'Unhide', () => hideItems('judge', [j.id], j.active), { aria: `${j.active ? 'Hide' : 'Unhide'} ${j.name}` }),
    small('Delete', () => deleteItems('judge', [j.id]), { danger: true, aria: `Delete ${j.name}` }),
  ],
  bulk: [
    { label: 'Hide', run: (ids) => hideItems('judge', ids, true) },
    { label: 'Unhide', run: (ids) => hideItems('judge', ids, false) },
    { label: 'Move to group…', run: (ids) => moveGroup('judge', ids) },
    { label: 'Email login code', run: (ids) => resendCodes(ids) },
    { label: 'Delete', danger: true, run: (ids) => deleteItems('judge', ids) },
  ],
});

// The login-code email's state. "unknown": the server sending it stopped before it
// recorded the outcome, and it is not sent again on its own (the organiser resends).
const mailLabels = { pending: 'queued', sending: 'sending', sent: 'sent', failed: 'failed', unknown: 'outcome unknown', skipped: 'not sent (no SMTP)' };
function mailPill(j) {
  if (!j.mail) return '–';
  const bad = j.mail.status === 'failed' || j.mail.status === 'unknown';
  return h('span', { class: bad ? 'pill hidden-state' : 'pill', title: j.mail.reason || when(j.mail.at) }, mailLabels[j.mail.status] || j.mail.status);
}

async function resendCodes(ids) {
  if (await run(api('POST', '/api/judge/email', { items: ids }), 'Login code email queued.')) loadJudges();
}

// emailParts lets an address break only after "@" and before a dot, never inside a
// word (a hyphenated domain would otherwise break at its hyphens).
function emailParts(email) {
  const pieces = email.split(/(?<=@)|(?=\.)/);
  const out = [];
  pieces.forEach((p, i) => { if (i) out.push(h('wbr')); out.push(h('span', { class: 'nw' }, p)); });
  return h('span', {}, ...out);
}

function currentName(j) {
  if (!j.current) return '';
  const p = A.projects.find((x) => x.id === j.current);
  // Before the project list has loaded the name is not known yet: a 24-digit id would
  // only widen the table (it cannot wrap), so a placeholder stands in.
  return p ? `${p.name} (table ${p.location})` : '…';
}

async function loadJudges() {
  const list = await quiet(api('GET', '/api/judge/list'));
  if (!Array.isArray(list)) return;
  A.judges = list;
  judgeTable.setRows(list);
  renderAverages();
}

async function judgeDetails(j) {
  // Fresh data: the list may be up to a second behind the last change.
  const list = await quiet(api('GET', '/api/judge/list'));
  if (Array.isArray(list)) {
    A.judges = list;
    judgeTable.setRows(list);
    j = list.find((x) => x.id === j.id) || j;
  }
  const seen = j.seen_projects || [];
  const byId = new Map(seen.map((s) => [s.project_id, s]));
  const ranked = (j.rankings || []).map((id) => byId.get(id)).filter(Boolean);
  const flagged = j.flagged || [];
  const skips = (A.flags || []).filter((f) => f.judge_id === j.id);
  const reasons = {};
  for (const f of skips) reasons[f.reason] = (reasons[f.reason] || 0) + 1;
  const body = [
    h('p', {}, `${j.email} · code `, h('span', { class: 'code' }, j.code), j.track ? ` · track ${j.track}` : ''),
    j.notes ? h('p', { class: 'muted' }, `Notes: ${j.notes}`) : null,
    h('p', {}, 'Login code email: ', mailPill(j), j.mail && j.mail.reason ? h('span', { class: 'muted' }, ` ${j.mail.reason}`) : '', ' ',
      small('Email login code', () => resendCodes([j.id]), { aria: `Email ${j.name} the login code` })),
    h('h3', {}, 'Ranking'),
    ranked.length ? h('ol', {}, ...ranked.map((s) => h('li', {}, `${s.name} (table ${s.location})`))) : h('p', { class: 'muted' }, 'No ranking submitted.'),
    h('h3', {}, `Judged projects (${seen.length})`),
    seen.length ? h('ul', {}, ...seen.map((s) => h('li', {}, h('strong', {}, s.name), ` · table ${s.location}`, s.starred ? ' · ★ starred' : '', s.notes ? h('div', { class: 'muted' }, s.notes) : null))) : h('p', { class: 'muted' }, 'Nothing judged yet.'),
    h('h3', {}, `Skips and flags (${skips.length})`),
    h('p', { class: 'hint' }, 'Every open skip by this judge, as the Flags tab lists them (busy and absent included)'
      + (skips.length ? `: ${Object.entries(reasons).map(([r, n]) => `${n} ${r}`).join(', ')}.` : '.')),
    skips.length ? h('ul', { class: 'judge-skips' }, ...skips.map((f) => h('li', {}, `${f.project_name} (table ${f.project_location}) · ${f.reason}`)))
      : h('p', { class: 'muted' }, 'No open skips or flags.'),
    h('h3', {}, `Reported as a problem (${flagged.length})`),
    h('p', { class: 'hint' }, "Of those, the projects skipped for a problem with the project (cannot demo, too complex, offensive): the judge app's \"flagged\" list. Busy, absent and conflict skips are not counted here."),
    flagged.length ? h('ul', { class: 'judge-flagged' }, ...flagged.map((id) => {
      const p = A.projects.find((x) => x.id === id);
      return h('li', {}, p ? `${p.name} (table ${p.location})` : id);
    })) : h('p', { class: 'muted' }, 'None.'),
  ];
  dialog(j.name, body, { okText: 'Close', cancel: false });
}

$('#judge-add').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const name = $('#ja-name').value.trim();
  const email = $('#ja-email').value.trim();
  if (!name || !email) { toast('Name and email are required.', true); return; }
  const body = { name, email, notes: $('#ja-notes').value, no_send: $('#ja-nosend').checked };
  if ($('#ja-track').value) body.track = $('#ja-track').value;
  if (await run(api('POST', '/api/judge/new', body), `Judge ${name} added.`)) {
    ev.target.reset();
    loadJudges();
  }
});

$('#judge-upload').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const err = $('#ju-error');
  err.hidden = true;
  const f = $('#ju-file').files[0];
  if (!f) { err.textContent = 'Choose a CSV file first.'; err.hidden = false; return; }
  const form = new FormData();
  form.append('csv', f);
  form.append('hasHeader', $('#ju-header').checked ? 'true' : 'false');
  form.append('noSend', $('#ju-nosend').checked ? 'true' : 'false');
  try {
    const r = await upload('/api/judge/csv', form);
    toast(`Imported ${r && r.added != null ? r.added : ''} judges.`);
    ev.target.reset();
    loadJudges();
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
  }
});

// ---------- projects ----------

const projectTable = new DataTable($('#projects-table'), {
  name: 'projects',
  columns: [
    { key: 'location', label: 'Table', num: true, value: (p) => p.location },
    { key: 'name', label: 'Name', value: (p) => p.name.toLowerCase(), render: (p) => p.name },
    { key: 'group', label: 'Group', hidden: groupsOff, value: (p) => p.group, render: (p) => groupName(A.options ? { names: A.options.group_names } : A.groupInfo, p.group) },
    { key: 'challenges', label: 'Challenges', value: (p) => (p.challenge_list || []).join(', ') },
    { key: 'seen', label: 'Seen', num: true, value: (p) => p.seen },
    { key: 'score', label: 'Score', num: true, value: (p) => p.score },
    { key: 'stars', label: 'Stars', num: true, value: (p) => p.stars },
    {
      key: 'active', label: 'Status', value: (p) => (p.active ? 0 : 1) * 2 + (p.prioritized ? 0 : 1),
      render: (p) => h('span', {}, p.active ? 'active' : h('span', { class: 'pill hidden-state' }, 'hidden'), p.prioritized ? h('span', { class: 'pill prio' }, 'priority') : ''),
    },
  ],
  search: (p) => `${p.name} ${p.location} ${p.description} ${(p.challenge_list || []).join(' ')}`,
  extraSig: () => [groupNames(), groupsOff()],
  rowClass: (p) => (p.active ? '' : 'inactive'),
  actions: (p) => [
    small('Move…', () => moveTable(p), { aria: `Move ${p.name} to another table` }),
    small(p.active ? 'Hide' : 'Unhide', () => hideItems('project', [p.id], p.active), { aria: `${p.active ? 'Hide' : 'Unhide'} ${p.name}` }),
    small(p.prioritized ? 'Unprioritize' : 'Prioritize', () => prioritize([p.id], !p.prioritized), { aria: `${p.prioritized ? 'Unprioritize' : 'Prioritize'} ${p.name}` }),
    small('Delete', () => deleteItems('project', [p.id]), { danger: true, aria: `Delete ${p.name}` }),
  ],
  bulk: [
    { label: 'Hide', run: (ids) => hideItems('project', ids, true) },
    { label: 'Unhide', run: (ids) => hideItems('project', ids, false) },
    { label: 'Prioritize', run: (ids) => prioritize(ids, true) },
    { label: 'Unprioritize', run: (ids) => prioritize(ids, false) },
    { label: 'Move to group…', run: (ids) => moveGroup('project', ids) },
    { label: 'Delete', danger: true, run: (ids) => deleteItems('project', ids) },
  ],
});

async function loadProjects() {
  const list = await quiet(api('GET', '/api/project/list'));
  if (!Array.isArray(list)) return;
  A.projects = list;
  projectTable.setRows(list);
  judgeTable.render(); // current-project names
  renderAverages();
  renderCoverage();
}

async function moveTable(p) {
  const loc = await promptNumber(`Move “${p.name}”`, 'New table number', p.location, 1);
  if (loc == null) return;
  if (await run(api('PUT', `/api/project/move/${p.id}`, { location: loc }), `Moved to table ${loc}.`)) loadProjects();
}

async function prioritize(ids, on) {
  if (await run(api('POST', '/api/project/prioritize', { items: ids, prioritize: on }), on ? 'Prioritized.' : 'Priority removed.')) loadProjects();
}

async function hideItems(kind, ids, hide) {
  if (await run(api('POST', `/api/${kind}/hide`, { items: ids, hide }), hide ? 'Hidden.' : 'Unhidden.')) {
    if (kind === 'judge') loadJudges(); else loadProjects();
  }
}

async function moveGroup(kind, ids) {
  const g = await promptGroup(`Move ${ids.length} ${kind}${ids.length === 1 ? '' : 's'} to a group`);
  if (g == null) return;
  if (await run(api('POST', `/api/${kind}/move/group`, { items: ids, group: g }), 'Moved.')) {
    if (kind === 'judge') loadJudges(); else loadProjects();
  }
}

async function deleteItems(kind, ids) {
  const list = kind === 'judge' ? A.judges : A.projects;
  const names = ids.map((id) => (list.find((x) => x.id === id) || {}).name || id);
  const what = ids.length === 1 ? `“${names[0]}”` : `${ids.length} ${kind}s`;
  const consequence = kind === 'judge'
    ? 'Its views, stars and rankings are removed from every score.'
    : 'It is removed from every judge\'s seen list and ranking.';
  if (!(await confirmDanger(`Delete ${what}?`, `This cannot be undone. ${consequence}`, 'Delete'))) return;
  let done = 0;
  for (const id of ids) {
    if (await run(api('DELETE', `/api/${kind}/${id}`))) done++;
  }
  toast(`Deleted ${done} ${kind}${done === 1 ? '' : 's'}.`);
  if (kind === 'judge') loadJudges(); else loadProjects();
}

$('#project-add').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const name = $('#pa-name').value.trim();
  if (!name) { toast('A project needs a name.', true); return; }
  const body = {
    name, description: $('#pa-desc').value, url: $('#pa-url').value.trim(), try_link: $('#pa-try').value.trim(),
    video_link: $('#pa-video').value.trim(), challenge_list: $('#pa-challenges').value,
    contact_emails: $('#pa-emails').value,
  };
  if (await run(api('POST', '/api/project/new', body), `Project ${name} added.`)) {
    ev.target.reset();
    loadProjects();
  }
});

$('#pu-kind').addEventListener('change', () => { $('#pu-header').disabled = $('#pu-kind').value === 'submissions'; });

$('#project-upload').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const err = $('#pu-error');
  err.hidden = true;
  const f = $('#pu-file').files[0];
  if (!f) { err.textContent = 'Choose a CSV file first.'; err.hidden = false; return; }
  const form = new FormData();
  form.append('csv', f);
  const subs = $('#pu-kind').value === 'submissions';
  if (!subs) form.append('hasHeader', $('#pu-header').checked ? 'true' : 'false');
  try {
    const r = await upload(subs ? '/api/project/submissions' : '/api/project/csv', form);
    const skipped = r && r.skipped ? `, skipped ${r.skipped}` : '';
    toast(`Imported ${r && r.added != null ? r.added : ''} projects${skipped}.`);
    ev.target.reset();
    loadProjects();
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
  }
});

// ---------- coverage chart (inline SVG) ----------

function barChart(title, bars, { zeroBad = false } = {}) {
  const W = 480, H = 180, top = 18, bottom = 34, left = 8;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const bw = Math.max(6, Math.min(60, (W - left * 2) / Math.max(1, bars.length) - 6));
  const svg = h('svg:svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title}: ${bars.map((b) => `${b.label}: ${b.value}`).join('; ') || 'no data'}` });
  svg.append(h('svg:line', { class: 'axis', x1: left, x2: W - left, y1: H - bottom, y2: H - bottom }));
  bars.forEach((b, i) => {
    const x = left + 3 + i * (bw + 6);
    const bh = Math.round(((H - top - bottom) * b.value) / max);
    const y = H - bottom - bh;
    svg.append(
      h('svg:rect', { class: zeroBad && b.key === 0 ? 'bar zero' : 'bar', x, y, width: bw, height: Math.max(bh, b.value ? 1 : 0), dataset: { key: String(b.key), value: String(b.value) } },
        h('svg:title', {}, `${b.label}: ${b.value}`)),
      h('svg:text', { x: x + bw / 2, y: y - 4, 'text-anchor': 'middle' }, String(b.value)),
      h('svg:text', { x: x + bw / 2, y: H - bottom + 16, 'text-anchor': 'middle' }, b.short ?? b.label),
    );
  });
  return svg;
}

function renderCoverage() {
  const active = A.projects.filter((p) => p.active);
  const maxSeen = Math.max(0, ...active.map((p) => p.seen));
  const counts = new Array(maxSeen + 1).fill(0);
  for (const p of active) counts[p.seen]++;
  const bars = counts.map((n, v) => ({ key: v, label: `${v} view${v === 1 ? '' : 's'}`, short: String(v), value: n }));
  const cov = $('#coverage');
  cov.replaceChildren(active.length ? barChart('Projects by number of views', bars, { zeroBad: true }) : h('p', { class: 'muted' }, 'No active projects yet.'));
  cov.dataset.counts = counts.join(',');

  const names = A.options ? A.options.group_names : A.groupInfo.names;
  const ngroups = Math.max(A.options ? A.options.num_groups : 1, ...active.map((p) => p.group + 1));
  const perGroup = new Array(ngroups).fill(0);
  for (const p of active) perGroup[p.group] += p.seen;
  const gbars = perGroup.map((v, g) => ({ key: g, label: groupName({ names }, g), short: groupName({ names }, g).slice(0, 10), value: v }));
  const gv = $('#group-views');
  const groupsOn = !!A.groupInfo.enabled; // "Views per group" only with groups on
  gv.hidden = !groupsOn;
  $('#grp-title').hidden = !groupsOn;
  gv.replaceChildren(active.length ? barChart('Views per group', gbars) : h('p', { class: 'muted' }, 'No views yet.'));
  gv.dataset.counts = perGroup.join(',');
}

// ---------- flags ----------

const flagTable = { root: $('#flags-table') };

async function loadFlags() {
  const list = await quiet(api('GET', '/api/admin/flags'));
  if (!Array.isArray(list)) return;
  A.flags = list;
  renderFlags();
}

function flagRow(f) {
  const text = `${f.project_name} (table ${f.project_location}) · ${f.reason} · ${f.judge_name} · ${when(f.time)}`;
  return h('li', {}, h('span', {}, text), small('Dismiss', () => dismissFlag(f), { aria: `Dismiss flag on ${f.project_name} (${f.reason})` }));
}

function renderFlags() {
  $('#flag-count').textContent = String(A.flags.length);
  $('#stat-flags').textContent = String(A.flags.length);
  const latest = [...A.flags].reverse().slice(0, 5);
  $('#flags-mini').replaceChildren(...latest.map((f) => flagRow(f)));
  $('#flags-mini-empty').hidden = A.flags.length > 0;
  flagTable.root.replaceChildren(
    h('div', { class: 'card' }, h('h2', {}, `Flags (${A.flags.length})`),
      A.flags.length ? h('ul', { class: 'flags' }, ...[...A.flags].reverse().map((f) => flagRow(f))) : h('p', { class: 'muted' }, 'No open flags.')),
  );
}

async function dismissFlag(f) {
  if (await run(api('DELETE', `/api/admin/flag/${f.id}`), 'Flag dismissed.')) loadFlags();
}

// ---------- audit log ----------

async function loadLog() {
  const r = await quiet(api('GET', '/api/admin/log'));
  if (!r || typeof r.log !== 'string') return;
  A.logLines = r.log.split('\n').filter(Boolean).slice(-MAX_LOG_LINES);
  $('#log').textContent = A.logLines.join('\n');
  scrollLog(true);
}

function appendLog(lines) {
  if (!lines.length) return;
  const box = $('#log');
  const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
  A.logLines.push(...lines);
  if (A.logLines.length > MAX_LOG_LINES) {
    A.logLines = A.logLines.slice(-MAX_LOG_LINES);
    box.textContent = A.logLines.join('\n');
  } else {
    box.append((box.textContent ? '\n' : '') + lines.join('\n'));
  }
  scrollLog(atBottom);
}

function scrollLog(force) {
  const box = $('#log');
  if (force) box.scrollTop = box.scrollHeight;
}

// ---------- options ----------

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const nums = (s) => list(s).map(Number);

// setEventName puts the event's name in the header and the page title.
function setEventName(name) {
  $('#event-name').textContent = name;
  document.title = `Admin · ${name}`;
}

async function loadOptions() {
  const o = await quiet(api('GET', '/api/admin/options'));
  if (!o) return;
  A.options = o;
  A.groupInfo = { names: o.group_names || [], enabled: !!o.multi_group, event_name: o.event_name };
  setEventName(o.event_name || 'Podium');
  setDeliberation(!!o.deliberation);
  fillOptions(o);
  const sel = $('#ja-track');
  const cur = sel.value;
  sel.replaceChildren(h('option', { value: '' }, 'General judge'), ...(o.tracks || []).map((t) => h('option', { value: t }, t)));
  sel.value = (o.tracks || []).includes(cur) ? cur : '';
  judgeTable.render();
  projectTable.render();
  renderCoverage();
  renderAverages(); // judge_tracks decides who is a general judge
}

function fillOptions(o) {
  const f = $('#options-form');
  if (f.contains(document.activeElement) && f.dataset.dirty === '1') return; // don't clobber edits
  $('#o-event_name').value = o.event_name || '';
  $('#o-judging_timer').value = o.judging_timer;
  $('#o-min_views').value = o.min_views;
  $('#o-clock_sync').checked = !!o.clock_sync;
  $('#o-judge_tracks').checked = !!o.judge_tracks;
  $('#o-tracks').value = (o.tracks || []).join(', ');
  $('#o-track_views').value = (o.track_views || []).join(', ');
  $('#o-ignore_tracks').value = (o.ignore_tracks || []).join(', ');
  $('#o-multi_group').checked = !!o.multi_group;
  $('#o-num_groups').value = o.num_groups;
  $('#o-group_sizes').value = (o.group_sizes || []).join(', ');
  $('#o-group_names').value = (o.group_names || []).join('\n');
  $('#o-switching_mode').value = o.switching_mode || 'auto';
  $('#o-auto_switch_prop').value = o.auto_switch_prop;
  $('#o-max_req_per_min').value = o.max_req_per_min;
  $('#o-block_reqs').checked = !!o.block_reqs;
  $('#options-ref').textContent = `Settings revision ${o.ref}: it goes up by one each time anyone saves a change, so a higher number than you saw means someone else changed them.`;
  f.dataset.dirty = '';
}

$('#options-form').addEventListener('input', () => { $('#options-form').dataset.dirty = '1'; });

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

$('#options-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const err = $('#options-error');
  err.hidden = true;
  const o = A.options || {};
  const want = {
    event_name: $('#o-event_name').value.trim(),
    judging_timer: Number($('#o-judging_timer').value),
    min_views: Number($('#o-min_views').value),
    clock_sync: $('#o-clock_sync').checked,
    judge_tracks: $('#o-judge_tracks').checked,
    tracks: list($('#o-tracks').value),
    ignore_tracks: list($('#o-ignore_tracks').value),
    multi_group: $('#o-multi_group').checked,
    num_groups: Number($('#o-num_groups').value),
    group_sizes: nums($('#o-group_sizes').value),
    group_names: $('#o-group_names').value.split('\n').map((x) => x.trim()).filter(Boolean),
    switching_mode: $('#o-switching_mode').value,
    auto_switch_prop: Number($('#o-auto_switch_prop').value),
    max_req_per_min: Number($('#o-max_req_per_min').value),
    block_reqs: $('#o-block_reqs').checked,
  };
  const body = {};
  for (const [k, v] of Object.entries(want)) if (!same(v, o[k])) body[k] = v;
  const trackViews = nums($('#o-track_views').value);
  try {
    if (Object.keys(body).length) await api('POST', '/api/admin/options', body);
    if (!same(trackViews, o.track_views || [])) await api('POST', '/api/admin/track-views', { track_views: trackViews });
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
    return;
  }
  $('#options-form').dataset.dirty = '';
  toast('Settings saved.');
  loadOptions();
});

$('#groups-swap').addEventListener('click', async () => {
  if (await confirmDanger('Move every judge to the next group?', 'Every active general judge moves to the next group now.', 'Move judges')) {
    if (await run(api('POST', '/api/admin/groups/swap'), 'Judges moved.')) loadJudges();
  }
});
$('#groups-balance').addEventListener('click', async () => {
  if (await run(api('POST', '/api/project/balance-groups'), 'Project groups balanced.')) { loadOptions(); loadProjects(); }
});

// ---------- QR codes, backup ----------

async function loadQR() {
  const tracks = (A.options && A.options.tracks) || [];
  const entries = [{ track: '', title: 'General judges' }, ...tracks.map((t) => ({ track: t, title: `Track: ${t}` }))];
  const cards = await Promise.all(entries.map(async (e) => {
    const path = e.track ? `/api/admin/qr/${encodeURIComponent(e.track)}` : '/api/admin/qr';
    const r = await quiet(api('GET', path));
    const code = r && r.qr_code ? r.qr_code : '';
    const link = code ? `${location.origin}/join?code=${encodeURIComponent(code)}${e.track ? `&track=${encodeURIComponent(e.track)}` : ''}` : '';
    const make = h('button', {
      type: 'button', class: 'small',
      onclick: async () => {
        if (code && !(await confirmDanger('Make a new QR code?', 'The current code stops working for new sign-ups.', 'New code'))) return;
        if (await run(api('POST', path), 'New QR code made.')) loadQR();
      },
    }, code ? 'Make a new code' : 'Make a QR code');
    return h('div', { class: 'card' }, h('h3', {}, e.title),
      code ? h('img', { src: `${path}.png?v=${encodeURIComponent(code.slice(0, 8))}`, alt: `QR code to join as a judge (${e.title})`, width: '240', height: '240' }) : h('p', { class: 'muted' }, 'No QR code yet.'),
      code ? h('p', { class: 'code hint' }, link) : null,
      make);
  }));
  $('#qr-list').replaceChildren(...cards);
}

$('#backup').addEventListener('click', async () => {
  const r = await run(api('POST', '/api/admin/backup'));
  if (r && r.backup) {
    $('#backup-result').replaceChildren('Backup written: ', h('a', { href: `/api/admin/backup/${encodeURIComponent(r.backup)}`, download: r.backup }, r.backup));
    toast('Backup written.');
  }
});

boot();
