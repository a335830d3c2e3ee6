// Admin dashboard (docs/behaviour.md#dashboard-and-expo): boot and login, the tabs, and the
// websocket, whose messages it hands to the modules below and re-dispatches as
// "podium:ws" for the others on the page (no polling). The rest lives beside it:
// admin-state.js (shared state, API and dialog helpers), overview.js (stats, clock,
// deliberation, pause banner), datatable.js, judges.js, projects.js, activity.js
// (coverage chart, flags, audit log) and settings.js (options, QR codes, backup).
import { api, $, show, LiveSocket, throttle, deliberationOn } from './lib.js';
import { A } from './admin-state.js';
import { renderStats, loadStats, loadClock, setClock, renderClock, setDeliberation } from './overview.js';
import { judgeTable, loadJudges } from './judges.js';
import { projectTable, loadProjects } from './projects.js';
import { renderCoverage, loadFlags, loadLog, appendLog, scrollLog } from './activity.js';
import { setEventName, loadOptions, loadQR } from './settings.js';

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

boot();
