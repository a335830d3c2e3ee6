// The visit: the project the judge stands at, its countdown, Done (notes, star, then
// placement) and Skip, Undo, and where to go next — from the server when it can be
// reached, else from the `upcoming` projects kept on the phone
// (docs/behaviour.md#judge-app).
import { api, h, $, show, toast, fmtCountdown, groupName } from './lib.js';
import { S, load, save } from './store.js';
import { judgedView, renderJudged, setStar, countChars } from './ranking.js';
import { place } from './placement.js';

const UNDO_MS = 60000;
const inner = ['#view-welcome', '#view-project', '#view-status'];

/** showInner shows one of the judging cards. */
export function showInner(sel) {
  show($(sel), ...inner.filter((s) => s !== sel).map((s) => $(s)));
  if (sel !== '#view-project') stopTimer();
}

// ---------- projects kept on the phone ----------

function cachedProject(id) {
  return load('projects', {})[id] || null;
}

// keepProjects stores project views, dropping those (and their countdowns) no longer
// current or upcoming.
function keepProjects(views, keep) {
  const all = load('projects', {});
  for (const p of views) all[p.id] = p;
  const out = {};
  const starts = load('starts', {});
  const kept = {};
  for (const id of keep) {
    if (all[id]) out[id] = all[id];
    if (starts[id]) kept[id] = starts[id];
  }
  save('projects', out);
  save('starts', kept);
}

async function fetchProject(id) {
  try {
    const p = await api('GET', `/api/project/${id}`);
    const all = load('projects', {});
    all[id] = p;
    save('projects', all);
    return p;
  } catch (e) {
    const p = cachedProject(id);
    if (p && (e.status === 0 || e.status === 401)) return p; // no network, or a login to come
    throw e;
  }
}

// ---------- statuses ----------

const STATUS = {
  paused: ['⏸', 'Judging is paused', 'The organisers have paused the clock. This page updates by itself when judging resumes.'],
  deliberation: ['⚖', 'Deliberation', 'Judging is closed while the organisers deliberate. You can still edit your notes under My projects.'],
  done: ['🎉', 'All done!', 'There are no more projects for you right now. Thank you! Check My projects to rank what you saw.'],
  inactive: ['⛔', 'Your account is paused', 'An organiser has paused your judging. Please talk to them.'],
  offline: ['⇅', 'Waiting for the connection', 'Everything you did is kept on this phone. Your next project comes as soon as the phone reaches the server again.'],
  error: ['⚠', 'Something went wrong', ''],
};

/** showStatus shows why there is no project. */
export function showStatus(reason, detail) {
  S.reason = reason;
  S.project = null;
  const [icon, title, text] = STATUS[reason] || ['•', reason, ''];
  $('#status-icon').textContent = icon;
  $('#status-title').textContent = title;
  $('#status-text').textContent = detail || text;
  $('#status-retry').hidden = !(reason === 'done' || reason === 'error' || reason === 'offline');
  showInner('#view-status');
  updatePausedNotice();
}

/** updatePausedNotice shows the paused banner over a project while the clock stops. */
export function updatePausedNotice() {
  $('#notice-paused').hidden = !(S.running === false && S.project && !S.deliberation);
}

// ---------- where to go next ----------

/** nextProject shows the visit under way, else asks the server, else the phone. */
export async function nextProject() {
  if (S.busy) return;
  S.busy = true;
  try {
    const v = load('visit', null);
    if (v) {
      await showProject(v.id).catch((e) => {
        if (e.status !== 404) throw e;
        save('visit', undefined); // deleted meanwhile: Check again asks for the next one
        throw new Error('This project was removed by the organisers.');
      });
      return;
    }
    await S.outbox.settle();
    if (S.outbox.moving()) {
      offlineNext();
      return;
    }
    let res;
    try {
      res = await api('POST', '/api/judge/next');
    } catch (e) {
      if (e.status === 401) { location.href = '/'; return; }
      if (e.status === 0) offlineNext();
      else showStatus('error', e.message);
      return;
    }
    await takeNext(res || {});
  } catch (e) {
    showStatus('error', e.message);
  } finally {
    S.busy = false;
  }
}

// takeNext shows the server's answer to next and keeps its upcoming projects.
async function takeNext(res) {
  const upcoming = Array.isArray(res.upcoming) ? res.upcoming : [];
  save('upcoming', upcoming);
  // Kept for walking on offline; fetched while the current project shows (a later
  // answer's fetch wins over an earlier one still under way).
  const gen = ++prefetchGen;
  Promise.all(upcoming.map((id) => api('GET', `/api/project/${id}`).catch(() => null))).then((views) => {
    if (gen === prefetchGen) keepProjects(views.filter(Boolean), [res.project_id, ...upcoming].filter(Boolean));
  });
  await showNext(res);
}

let prefetchGen = 0;

// showNext shows the project next named (or why there is none).
async function showNext(res) {
  if (!res.project_id) {
    showStatus(res.reason || 'done');
    return;
  }
  const deferred = load('deferred', {});
  const d = deferred[res.project_id];
  if (d) {
    // The judge skipped this project while the server could not be told which one.
    delete deferred[res.project_id];
    save('deferred', deferred);
    const reason = typeof d === 'string' ? d : d.reason; // a string: kept by an earlier build
    S.outbox.add('skip', 'POST', '/api/judge/skip', { reason }, { id: res.project_id, label: 'a skip made offline' });
    S.busy = false;
    setTimeout(nextProject, 0);
    return;
  }
  save('visit', { id: res.project_id, local: false });
  if (S.deliberation) {
    showStatus('deliberation');
    return;
  }
  await showProject(res.project_id);
}

// offlineNext walks on to the first upcoming project kept on the phone.
function offlineNext() {
  const gone = new Set([...judgedView().list.map((p) => p.project_id), ...load('skipped', [])]);
  const id = load('upcoming', []).find((x) => !gone.has(x) && cachedProject(x));
  if (!id) {
    showStatus('offline');
    return;
  }
  save('visit', { id, local: true });
  showProject(id).catch((e) => showStatus('error', e.message));
}

/**
 * reconcile follows the server's current project (after the outbox drained, on a
 * reconnect or a `judge` event). While actions that move the judge still wait, the
 * server's answer is out of date and the phone's visit stands.
 */
export function reconcile(cur) {
  if (!S.judge || !S.judge.read_welcome || S.outbox.moving()) return;
  const v = load('visit', null);
  if (S.deliberation && !cur) {
    if (S.reason !== 'deliberation') showStatus('deliberation');
  } else if (cur && (!v || v.id !== cur)) {
    save('visit', { id: cur, local: false });
    showProject(cur).catch((e) => toast(e.message, true));
  } else if (cur && v.local) {
    save('visit', { id: cur, local: false });
  } else if (!cur && v && v.local) {
    announceVisit(v.id);
  } else if (!cur && v && !v.local) {
    save('visit', undefined);
    toast('Your project was released by the organisers.');
    nextProject();
  } else if (!cur && !v && S.reason !== 'deliberation' && S.reason !== 'inactive') {
    nextProject();
  } else {
    updatePausedNotice();
  }
}

// announced holds the visits begun offline the server refused to hold (at most one
// try each per page: the finish will say why again, with the notes kept).
const announced = new Set();

// announceVisit tells the server the judge stands at a project it walked to offline
// (an upcoming one), so the organisers see it as the judge's current project
// (docs/behaviour.md#offered-projects-only).
async function announceVisit(id) {
  if (announced.has(id)) return;
  announced.add(id);
  try {
    await api('POST', '/api/judge/at', { project: id });
  } catch (e) {
    if (e.status === 0 || e.status >= 500 || e.status === 429) announced.delete(id); // tried again on the next resync
    else toast(`The server cannot hold this visit: ${e.message}`, true);
    return;
  }
  const v = load('visit', null);
  if (v && v.id === id) save('visit', { id, local: false });
}

// ---------- the project on screen ----------

async function showProject(id) {
  const p = await fetchProject(id);
  S.project = p;
  S.reason = null;
  $('#project-table').textContent = p.location;
  $('#project-name').textContent = p.name;
  const grp = S.groupInfo.enabled ? groupName(S.groupInfo, S.judge.group) : '';
  $('#project-group').textContent = grp;
  $('#project-group').hidden = !grp;
  $('#project-challenges').replaceChildren(...(p.challenge_list || []).map((c) => h('span', { class: 'pill' }, c)));
  $('#project-desc').textContent = p.description || '';
  const links = [];
  if (p.url) links.push(safeLink(p.url, 'Project page'));
  if (p.try_link) links.push(safeLink(p.try_link, 'Try it'));
  if (p.video_link) links.push(safeLink(p.video_link, 'Video'));
  $('#project-links').replaceChildren(...links.filter(Boolean));
  restoreDraft(id);
  const fromJudging = !document.activeElement || document.activeElement === document.body || $('#judging').contains(document.activeElement);
  showInner('#view-project');
  updatePausedNotice();
  startTimer(id);
  if (fromJudging && S.view === 'judge' && $('#finish-form').hidden) $('#project-name').focus();
}

function safeLink(url, text) {
  if (!/^https?:\/\//i.test(url)) return null;
  return h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, text);
}

let tick = 0;

// startTimer counts down from the moment the phone first showed the project (kept on
// the phone, so a reload, a closed tab or a server restart does not reset it).
function startTimer(id) {
  stopTimer();
  if (!S.timer) {
    $('#timer-wrap').hidden = true;
    return;
  }
  $('#timer-wrap').hidden = false;
  const starts = load('starts', {});
  if (!starts[id]) {
    starts[id] = Date.now();
    save('starts', starts);
  }
  const start = starts[id];
  const render = () => {
    const left = S.timer - (Date.now() - start) / 1000;
    const el = $('#timer');
    el.textContent = left >= 0 ? fmtCountdown(Math.ceil(left)) : `Time's up (${fmtCountdown(Math.floor(left))})`;
    el.classList.toggle('over', left < 0);
  };
  render();
  tick = setInterval(render, 1000);
}

function stopTimer() {
  clearInterval(tick);
  tick = 0;
}

// ---------- Done / Skip, with drafts that survive a reload ----------

function restoreDraft(id) {
  const d = load(`draft.${id}`, null);
  $('#skip-form').hidden = true;
  $('#place-form').hidden = true;
  $('#finish-notes').value = d ? d.notes : '';
  $('#finish-feedback').value = (d && d.feedback) || '';
  countChars($('#finish-feedback'), $('#finish-feedback-count'));
  setStar($('#finish-star'), !!(d && d.starred));
  $('#finish-form').hidden = !(d && d.open);
  $('#actions').hidden = !!(d && d.open);
  for (const r of document.querySelectorAll('#skip-form input[name=reason]')) r.checked = false;
}

function saveDraft(open) {
  if (!S.project) return;
  save(`draft.${S.project.id}`, {
    notes: $('#finish-notes').value,
    feedback: $('#finish-feedback').value,
    starred: $('#finish-star').getAttribute('aria-pressed') === 'true',
    open,
  });
}

function closeForms() {
  saveDraft(false);
  $('#finish-form').hidden = true;
  $('#skip-form').hidden = true;
  $('#place-form').hidden = true;
  $('#actions').hidden = false;
}

$('#btn-done').addEventListener('click', () => {
  $('#actions').hidden = true;
  $('#finish-form').hidden = false;
  saveDraft(true);
  $('#finish-notes').focus();
});
$('#btn-skip').addEventListener('click', () => {
  $('#actions').hidden = true;
  $('#skip-form').hidden = false;
  $('#skip-form input[name=reason]').focus();
});
$('#finish-cancel').addEventListener('click', closeForms);
$('#skip-cancel').addEventListener('click', closeForms);
$('#finish-notes').addEventListener('input', () => saveDraft(true));
$('#finish-feedback').addEventListener('input', () => {
  countChars($('#finish-feedback'), $('#finish-feedback-count'));
  saveDraft(true);
});
$('#finish-star').addEventListener('click', (ev) => {
  const b = ev.currentTarget;
  setStar(b, b.getAttribute('aria-pressed') !== 'true');
  saveDraft(true);
});

function describe(p) {
  return { id: p.id, name: p.name, location: p.location };
}

$('#finish-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const p = S.project;
  const v = load('visit', null);
  if (!p || !v) return;
  const notes = $('#finish-notes').value;
  const feedback = $('#finish-feedback').value;
  const starred = $('#finish-star').getAttribute('aria-pressed') === 'true';
  const view = judgedView();
  const order = view.ranking;
  $('#finish-form').hidden = true;
  const at = await place(p, order.map((id) => view.byId.get(id)));
  if (at === null) {
    $('#finish-form').hidden = false;
    $('#finish-notes').focus();
    return;
  }
  if (!S.project || S.project.id !== p.id) return; // moved elsewhere meanwhile
  const ranking = [...order.slice(0, at), p.id, ...order.slice(at)];
  const meta = { id: p.id, project: describe(p), label: `your visit to “${p.name}” (table ${p.location})` };
  const fin = S.outbox.add('finish', 'POST', '/api/judge/finish', { project: p.id, notes, starred, feedback }, meta);
  S.outbox.add('rank', 'POST', '/api/judge/rank', { ranking }, { label: 'your ranking' });
  save(`draft.${p.id}`, undefined);
  save('visit', undefined);
  save('undo', { project: describe(p), notes, feedback, starred, local: v.local, key: fin.key, until: Date.now() + UNDO_MS });
  S.project = null;
  renderJudged();
  toast(`“${p.name}” placed as your #${at + 1}.`);
  await nextProject();
  showUndo();
});

$('#skip-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const r = document.querySelector('#skip-form input[name=reason]:checked');
  const p = S.project;
  const v = load('visit', null);
  if (!r) {
    toast('Pick a reason first.', true);
    return;
  }
  if (!p || !v) return;
  if (v.local) {
    // The server does not know the judge is here: the skip is sent if the server ever
    // assigns this project (docs/behaviour.md#judge-app); the status line says it waits.
    save('deferred', { ...load('deferred', {}), [p.id]: { reason: r.value, name: p.name } });
    S.outbox.setState(S.outbox.state);
  } else {
    S.outbox.add('skip', 'POST', '/api/judge/skip', { reason: r.value }, { id: p.id, label: `skipping “${p.name}”` });
  }
  save('skipped', [...load('skipped', []), p.id]);
  save(`draft.${p.id}`, undefined);
  save('visit', undefined);
  save('undo', undefined);
  hideUndo();
  S.project = null;
  let said = 'Skipped.';
  if (r.value === 'conflict') said = 'You won’t be sent to this project again; it does not count against the team.';
  else if (v.local) said = 'Skipped; kept on this phone until the server sends you this project.';
  toast(said);
  await nextProject();
});

// ---------- Undo ----------

let undoTick = 0;

/** showUndo shows the Undo bar while the last finish can still be taken back. */
export function showUndo() {
  clearInterval(undoTick);
  const u = load('undo', null);
  if (!u || Date.now() >= u.until) {
    hideUndo();
    return;
  }
  const render = () => {
    const left = Math.ceil((u.until - Date.now()) / 1000);
    if (left <= 0) {
      hideUndo();
      return;
    }
    $('#undo-text').textContent = `Saved “${u.project.name}”. Mis-tapped? You can undo it for ${left} s.`;
  };
  render();
  $('#undo-bar').hidden = false;
  undoTick = setInterval(render, 1000);
}

function hideUndo() {
  clearInterval(undoTick);
  $('#undo-bar').hidden = true;
}

$('#undo').addEventListener('click', () => {
  const u = load('undo', null);
  hideUndo();
  save('undo', undefined);
  if (!u || Date.now() >= u.until) {
    toast('Too late to undo: the visit is saved.', true);
    return;
  }
  const id = u.project.id;
  let local = u.local;
  if (S.outbox.remove(u.key)) {
    // Never sent: take it back on the phone only.
    S.outbox.rewrite('rank', (b) => ({ ranking: b.ranking.filter((x) => x !== id) }));
  } else {
    S.outbox.add('undo', 'POST', '/api/judge/undo', undefined, { id, project: u.project, label: `undoing your visit to “${u.project.name}”` });
    local = false;
  }
  save(`draft.${id}`, { notes: u.notes, feedback: u.feedback || '', starred: u.starred, open: true });
  save('visit', { id, local });
  renderJudged();
  showProject(id).catch((e) => toast(e.message, true));
  toast(`Back at “${u.project.name}”.`);
});
