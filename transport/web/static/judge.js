// Judge app: login (code or QR join), welcome, current project with countdown, Done/Skip,
// live paused/deliberation/done states, judged list with notes, stars and ranking.
import {
  api, h, $, show, toast, fmtCountdown, groupName, LiveSocket, deliberationOn, ApiError,
} from './lib.js';

const S = {
  judge: null,
  groupInfo: { names: [], enabled: false },
  timer: 0, // judging_timer in seconds
  current: null, // current project id
  project: null, // current project (judge view)
  reason: null, // why there is no project
  deliberation: false,
  running: null, // clock running, null until known
  judged: [], // judged-project views
  ranking: [], // ids, best first
  socket: null,
  tick: 0,
  view: 'judge',
  busy: false,
};

const views = ['#view-login', '#view-join', '#view-app'].map((s) => $(s));
const inner = ['#view-welcome', '#view-project', '#view-status'].map((s) => $(s));

function showOnly(sel) {
  $('#loading').hidden = true;
  show($(sel), ...views.filter((v) => v !== $(sel)));
}

function showInner(sel) {
  show($(sel), ...inner.filter((v) => v !== $(sel)));
  if (sel !== '#view-project') stopTimer();
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
    if (await login(code)) return;
    return;
  }
  try {
    S.judge = await api('GET', '/api/judge');
  } catch (e) {
    if (e.status === 401) {
      showOnly('#view-login');
      $('#login-code').focus();
      return;
    }
    showError(e);
    return;
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

async function login(code) {
  const err = $('#login-error');
  err.hidden = true;
  try {
    await api('POST', '/api/judge/login', { code: code.trim() });
    S.judge = await api('GET', '/api/judge');
  } catch (e) {
    showOnly('#view-login');
    err.textContent = e.status === 400 || e.status === 401 ? 'That code is not valid. Check your email and try again.' : e.message;
    err.hidden = false;
    $('#login-code').value = code;
    $('#login-code').focus();
    return false;
  }
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
    await login(String(res.code));
  });
}

$('#logout').addEventListener('click', async () => {
  try { await api('POST', '/api/judge/logout'); } catch { /* logged out anyway */ }
  location.href = '/';
});

// ---------- app ----------

async function startApp() {
  showOnly('#view-app');
  $('#logout').hidden = false;
  $('#who').textContent = S.judge.name;
  $('#welcome-name').textContent = S.judge.name;
  S.current = S.judge.current || null;
  S.ranking = S.judge.rankings || [];
  S.savedRanking = S.ranking;
  const [gi, timer, delib] = await Promise.allSettled([
    api('GET', '/api/group-info'),
    api('GET', '/api/admin/timer'),
    api('GET', '/api/judge/deliberation'),
  ]);
  if (gi.status === 'fulfilled' && gi.value) S.groupInfo = gi.value;
  if (timer.status === 'fulfilled' && timer.value) S.timer = Number(timer.value.judging_timer) || 0;
  if (delib.status === 'fulfilled' && delib.value) S.deliberation = delib.value.ok === 1;
  S.socket = new LiveSocket(onMessage, (up) => { $('#notice-offline').hidden = up; });
  loadJudged();
  if (!S.judge.read_welcome) {
    showInner('#view-welcome');
    $('#welcome-ok').focus();
    return;
  }
  await nextProject();
}

$('#welcome-ok').addEventListener('click', async () => {
  try { await api('PUT', '/api/judge/welcome'); } catch (e) { toast(e.message, true); }
  S.judge.read_welcome = true;
  await nextProject();
});

// nextProject asks for the current or next project and shows it or the reason.
async function nextProject() {
  if (S.busy) return;
  S.busy = true;
  try {
    const res = await api('POST', '/api/judge/next');
    if (res && res.project_id && S.deliberation) {
      S.current = res.project_id; // kept, but nothing can be finished while deliberating
      showStatus('deliberation');
    } else if (res && res.project_id) {
      await showProject(res.project_id);
    } else {
      S.current = null;
      showStatus((res && res.reason) || 'done');
    }
  } catch (e) {
    if (e.status === 401) { location.href = '/'; return; }
    showStatus('error', e.message);
  } finally {
    S.busy = false;
  }
}

async function showProject(id) {
  const p = await api('GET', `/api/project/${id}`);
  S.current = id;
  S.project = p;
  S.reason = null;
  $('#project-table').textContent = p.location;
  $('#project-name').textContent = p.name;
  S.projectGroup = S.judge.group; // assignments come from the judge's group at the time
  const grp = S.groupInfo.enabled ? groupName(S.groupInfo, S.projectGroup) : '';
  $('#project-group').textContent = grp;
  $('#project-group').hidden = !grp;
  const ch = $('#project-challenges');
  ch.replaceChildren(...(p.challenge_list || []).map((c) => h('span', { class: 'pill' }, c)));
  $('#project-desc').textContent = p.description || '';
  const links = [];
  if (p.url) links.push(safeLink(p.url, 'Project page'));
  if (p.try_link) links.push(safeLink(p.try_link, 'Try it'));
  if (p.video_link) links.push(safeLink(p.video_link, 'Video'));
  $('#project-links').replaceChildren(...links.filter(Boolean));
  closeForms();
  const fromJudging = !document.activeElement || document.activeElement === document.body || $('#judging').contains(document.activeElement);
  showInner('#view-project');
  updatePausedNotice();
  startTimer(id);
  // Move focus to the new project so keyboard and screen reader users land on it.
  if (fromJudging && S.view === 'judge') $('#project-name').focus();
}

function safeLink(url, text) {
  if (!/^https?:\/\//i.test(url)) return null;
  return h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, text);
}

function startTimer(id) {
  stopTimer();
  if (!S.timer) {
    $('#timer-wrap').hidden = true;
    return;
  }
  $('#timer-wrap').hidden = false;
  const key = `podium.start.${id}`;
  let start = Number(sessionStorage.getItem(key));
  if (!start) {
    start = Date.now();
    sessionStorage.setItem(key, String(start));
  }
  const render = () => {
    const left = S.timer - (Date.now() - start) / 1000;
    const el = $('#timer');
    el.textContent = left >= 0 ? fmtCountdown(Math.ceil(left)) : `Time's up (${fmtCountdown(Math.floor(left))})`;
    el.classList.toggle('over', left < 0);
  };
  render();
  S.tick = setInterval(render, 1000);
}

function stopTimer() {
  clearInterval(S.tick);
  S.tick = 0;
}

const STATUS = {
  paused: ['⏸', 'Judging is paused', 'The organisers have paused the clock. This page updates by itself when judging resumes.'],
  deliberation: ['⚖', 'Deliberation', 'Judging is closed while the organisers deliberate. You can still edit your notes under My projects.'],
  done: ['🎉', 'All done!', 'There are no more projects for you right now. Thank you! Check My projects to rank what you saw.'],
  inactive: ['⛔', 'Your account is paused', 'An organiser has paused your judging. Please talk to them.'],
  error: ['⚠', 'Something went wrong', ''],
};

function showStatus(reason, detail) {
  S.reason = reason;
  S.project = null;
  const [icon, title, text] = STATUS[reason] || [ '•', reason, '' ];
  $('#status-icon').textContent = icon;
  $('#status-title').textContent = title;
  $('#status-text').textContent = detail || text;
  $('#status-retry').hidden = !(reason === 'done' || reason === 'error');
  showInner('#view-status');
  updatePausedNotice();
}

$('#status-retry').addEventListener('click', () => nextProject());

function updatePausedNotice() {
  $('#notice-paused').hidden = !(S.running === false && S.project && !S.deliberation);
}

// ---------- Done / Skip ----------

function closeForms() {
  $('#finish-form').hidden = true;
  $('#skip-form').hidden = true;
  $('#actions').hidden = false;
  $('#finish-notes').value = '';
  setStar($('#finish-star'), false);
  for (const r of document.querySelectorAll('#skip-form input[name=reason]')) r.checked = false;
}

function setStar(btn, on) {
  btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  btn.querySelector('.star-icon').textContent = on ? '★' : '☆';
}

$('#btn-done').addEventListener('click', () => {
  $('#actions').hidden = true;
  $('#finish-form').hidden = false;
  $('#finish-notes').focus();
});
$('#btn-skip').addEventListener('click', () => {
  $('#actions').hidden = true;
  $('#skip-form').hidden = false;
  $('#skip-form input[name=reason]').focus();
});
$('#finish-cancel').addEventListener('click', closeForms);
$('#skip-cancel').addEventListener('click', closeForms);
$('#finish-star').addEventListener('click', (ev) => {
  const b = ev.currentTarget;
  setStar(b, b.getAttribute('aria-pressed') !== 'true');
});

$('#finish-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const btn = $('#finish-submit');
  btn.disabled = true;
  try {
    await api('POST', '/api/judge/finish', {
      notes: $('#finish-notes').value,
      starred: $('#finish-star').getAttribute('aria-pressed') === 'true',
    });
    sessionStorage.removeItem(`podium.start.${S.current}`);
    S.current = null;
    toast('Saved. On to the next one!');
    loadJudged();
    await nextProject();
  } catch (e) {
    toast(e.message, true);
  } finally {
    btn.disabled = false;
  }
});

$('#skip-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const r = document.querySelector('#skip-form input[name=reason]:checked');
  if (!r) {
    toast('Pick a reason first.', true);
    return;
  }
  const btn = $('#skip-submit');
  btn.disabled = true;
  try {
    await api('POST', '/api/judge/skip', { reason: r.value });
    sessionStorage.removeItem(`podium.start.${S.current}`);
    S.current = null;
    toast('Skipped.');
    await nextProject();
  } catch (e) {
    toast(e.message, true);
  } finally {
    btn.disabled = false;
  }
});

// ---------- live updates ----------

/** eventTitle puts options.event_name into the page title. */
function eventTitle(gi) {
  if (gi && gi.event_name) document.title = `Judging · ${gi.event_name}`;
}
api('GET', '/api/group-info').then(eventTitle, () => {});

function onMessage(type, d) {
  if (type === 'group_info') eventTitle(d);
  switch (type) {
    case 'hello':
      if (d.clock) S.running = !!d.clock.running;
      if ('deliberation' in d) S.deliberation = deliberationOn(d.deliberation);
      if (d.group_info) S.groupInfo = d.group_info;
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
      $('#rank-locked').hidden = !S.deliberation;
      renderJudged();
      if (S.deliberation) showStatus('deliberation');
      else nextProject();
      break;
    case 'group_info':
      S.groupInfo = d;
      if (S.project) {
        $('#project-group').textContent = S.groupInfo.enabled ? groupName(S.groupInfo, S.projectGroup) : '';
        $('#project-group').hidden = !S.groupInfo.enabled;
      }
      break;
    case 'judge': {
      if (typeof d.group === 'number' && S.judge && d.group !== S.judge.group) {
        S.judge.group = d.group;
        const n = $('#notice-group');
        n.replaceChildren(
          `You have been moved to ${groupName(S.groupInfo, d.group)}. `,
          h('button', { type: 'button', class: 'small', onclick: () => { n.hidden = true; } }, 'OK'),
        );
        n.hidden = false;
      }
      reconcile(d.current || null);
      break;
    }
    default:
  }
}

// resync re-reads the judge after a (re)connect: the hello may predate a request this
// page made meanwhile, so the server's current view decides.
async function resync() {
  if (!S.judge || !S.judge.read_welcome || S.busy) return;
  let me;
  try { me = await api('GET', '/api/judge'); } catch { return; }
  S.judge = { ...S.judge, ...me };
  const cur = me.current || null;
  if (S.deliberation && !cur) {
    if (S.reason !== 'deliberation') showStatus('deliberation');
  } else if (cur && cur !== S.current) {
    showProject(cur).catch((e) => toast(e.message, true));
  } else if (!cur && (S.current || (S.reason === 'paused' && S.running) || S.reason === 'deliberation')) {
    S.current = null;
    nextProject();
  } else {
    updatePausedNotice();
  }
}

// reconcile follows a server-side change of the current project.
function reconcile(current) {
  if (!S.judge || !S.judge.read_welcome) return;
  if (S.deliberation && !current) {
    if (S.reason !== 'deliberation') showStatus('deliberation');
    return;
  }
  if (current && current !== S.current) {
    showProject(current).catch((e) => toast(e.message, true));
  } else if (!current && S.current) {
    S.current = null;
    S.project = null;
    toast('Your project was released by the organisers.');
    nextProject();
  } else if (!current && !S.current && S.reason === 'paused' && S.running) {
    nextProject();
  } else {
    updatePausedNotice();
  }
}

// ---------- judged list, notes, stars, ranking ----------

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

async function loadJudged() {
  const version = rankVersion;
  try {
    const [list, me] = await Promise.all([api('GET', '/api/judge/projects'), api('GET', '/api/judge')]);
    S.judged = Array.isArray(list) ? list : [];
    S.judge = { ...S.judge, ...me };
    S.savedRanking = me.rankings || [];
    if (!rankSaving && version === rankVersion) S.ranking = S.savedRanking;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return;
    toast(e.message, true);
    return;
  }
  renderJudged();
}

let judgedSig = '';

// renderJudged redraws the list only when something in it changed, so that a refetch
// never throws away notes being typed or a button about to be pressed.
function renderJudged() {
  const sig = JSON.stringify([S.judged, S.ranking, S.deliberation]);
  if (sig === judgedSig) return;
  judgedSig = sig;
  $('#judged-count').textContent = String(S.judged.length);
  $('#rank-locked').hidden = !S.deliberation;
  const byId = new Map(S.judged.map((p) => [p.project_id, p]));
  const ranked = S.ranking.filter((id) => byId.has(id));
  const rankedSet = new Set(ranked);
  const unranked = S.judged.filter((p) => !rankedSet.has(p.project_id));
  $('#ranked').replaceChildren(...ranked.map((id, i) => judgedItem(byId.get(id), i, ranked.length)));
  $('#unranked').replaceChildren(...unranked.map((p) => judgedItem(p, -1, ranked.length)));
  $('#ranked-empty').hidden = ranked.length > 0;
  $('#unranked-empty').hidden = unranked.length > 0 || S.judged.length === 0;
  $('#rank-nudge').hidden = unranked.length === 0;
}

function judgedItem(p, idx, n) {
  const locked = S.deliberation;
  const li = h('li', { dataset: { id: p.project_id } });
  const star = h('button', {
    type: 'button', class: 'star small', 'aria-pressed': p.starred ? 'true' : 'false',
    'aria-label': `Star ${p.name}`, disabled: locked,
    onclick: async () => {
      const next = !p.starred;
      try {
        await api('PUT', `/api/judge/star/${p.project_id}`, { starred: next });
        p.starred = next;
        setStar(star, next);
      } catch (e) { toast(e.message, true); }
    },
  }, h('span', { class: 'star-icon', 'aria-hidden': 'true' }, p.starred ? '★' : '☆'));
  const line = h('div', { class: 'rank-line' });
  if (idx >= 0) {
    const handle = h('span', { class: 'drag-handle', 'aria-hidden': 'true', title: 'Drag to reorder' }, '≡');
    if (!locked) handle.addEventListener('pointerdown', (ev) => startDrag(ev, li));
    line.append(handle, h('span', { class: 'rank-no' }, `${idx + 1}.`));
  }
  line.append(h('span', { class: 'name' }, p.name, h('span', { class: 'hint' }, `Table ${p.location}`)), star);
  const btns = h('div', { class: 'rank-buttons' });
  if (idx >= 0) {
    btns.append(
      h('button', { type: 'button', class: 'small', 'aria-label': `Move ${p.name} up`, disabled: locked || idx === 0, onclick: () => moveRank(p.project_id, -1) }, '▲'),
      h('button', { type: 'button', class: 'small', 'aria-label': `Move ${p.name} down`, disabled: locked || idx === n - 1, onclick: () => moveRank(p.project_id, 1) }, '▼'),
      h('button', { type: 'button', class: 'small', 'aria-label': `Remove ${p.name} from ranking`, disabled: locked, onclick: () => setRanking(S.ranking.filter((x) => x !== p.project_id)) }, '✕'),
    );
  } else {
    btns.append(h('button', { type: 'button', class: 'small', 'aria-label': `Rank ${p.name}`, disabled: locked, onclick: () => setRanking([...S.ranking.filter((x) => S.judged.some((q) => q.project_id === x)), p.project_id]) }, 'Rank'));
  }
  line.append(btns);
  const notesId = `notes-${p.project_id}`;
  const notes = h('textarea', { id: notesId, maxlength: '20000' });
  notes.value = p.notes || '';
  const save = h('button', {
    type: 'button', class: 'small', onclick: async () => {
      try {
        await api('PUT', `/api/judge/notes/${p.project_id}`, { notes: notes.value });
        p.notes = notes.value;
        toast('Notes saved.');
      } catch (e) { toast(e.message, true); }
    },
  }, 'Save notes');
  const details = h('details', {},
    h('summary', {}, p.notes ? 'Notes' : 'Add notes'),
    h('label', { for: notesId }, `Notes on ${p.name}`), notes, save);
  li.append(line, details);
  return li;
}

function moveRank(id, delta) {
  const r = S.ranking.filter((x) => S.judged.some((q) => q.project_id === x));
  const i = r.indexOf(id);
  const j = i + delta;
  if (i < 0 || j < 0 || j >= r.length) return;
  [r[i], r[j]] = [r[j], r[i]];
  setRanking(r, id);
}

// Ranking saves go out one at a time, latest order wins: two quick changes must not
// reach the server out of order.
let rankSaving = false;
let rankDirty = false;
let rankVersion = 0;

async function setRanking(r, focusId) {
  rankVersion++;
  S.ranking = r;
  renderJudged();
  if (focusId) {
    const li = document.querySelector(`#ranked li[data-id="${focusId}"]`);
    const b = li && [...li.querySelectorAll('.rank-buttons button')].find((x) => !x.disabled);
    if (b) b.focus();
  }
  rankDirty = true;
  if (rankSaving) return;
  rankSaving = true;
  while (rankDirty) {
    rankDirty = false;
    const sending = S.ranking.slice();
    try {
      await api('POST', '/api/judge/rank', { ranking: sending });
      S.savedRanking = sending;
    } catch (e) {
      rankDirty = false;
      S.ranking = S.savedRanking || [];
      renderJudged();
      toast(e.message, true);
    }
  }
  rankSaving = false;
}

// Drag to reorder with pointer events (mouse, pen and touch alike).
function startDrag(ev, li) {
  ev.preventDefault();
  const handle = ev.currentTarget;
  handle.setPointerCapture(ev.pointerId);
  li.classList.add('dragging');
  let target = null;
  const move = (e) => {
    const el = document.elementFromPoint(e.clientX, e.clientY);
    const over = el && el.closest('#ranked > li');
    if (target && target !== over) target.classList.remove('drop-target');
    target = over && over !== li ? over : null;
    if (target) target.classList.add('drop-target');
  };
  const end = () => {
    handle.removeEventListener('pointermove', move);
    handle.removeEventListener('pointerup', end);
    handle.removeEventListener('pointercancel', end);
    li.classList.remove('dragging');
    if (!target) return;
    target.classList.remove('drop-target');
    const r = S.ranking.filter((x) => S.judged.some((q) => q.project_id === x));
    const from = r.indexOf(li.dataset.id);
    const to = r.indexOf(target.dataset.id);
    if (from < 0 || to < 0) return;
    r.splice(from, 1);
    r.splice(to, 0, li.dataset.id);
    setRanking(r);
  };
  handle.addEventListener('pointermove', move);
  handle.addEventListener('pointerup', end);
  handle.addEventListener('pointercancel', end);
}

boot();
