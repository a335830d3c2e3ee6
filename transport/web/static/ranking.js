// The judge's projects: what it saw (the server's list plus the finishes still waiting
// in the outbox), notes, stars and the ranking screen (▲▼ and drag). Every change goes
// through the outbox (docs/behaviour.md#judge-app).
import { api, h, $, toast, ApiError } from './lib.js';
import { S, load, save, saveMe } from './store.js';

// FEEDBACK_MAX is the longest feedback for a team the server takes (characters).
const FEEDBACK_MAX = 2000;

/**
 * countChars shows how much room is left in a feedback field once it nears the limit
 * (hidden until then, so a short note is not nagged by a counter).
 */
export function countChars(field, counter) {
  const n = field.value.length;
  counter.hidden = n < FEEDBACK_MAX * 0.8;
  counter.textContent = n >= FEEDBACK_MAX
    ? `${FEEDBACK_MAX.toLocaleString('en')} of ${FEEDBACK_MAX.toLocaleString('en')} characters: that is the limit`
    : `${(FEEDBACK_MAX - n).toLocaleString('en')} characters left`;
  counter.classList.toggle('at-limit', n >= FEEDBACK_MAX);
}

/** setStar shows a star button on or off. */
export function setStar(btn, on) {
  btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  btn.querySelector('.star-icon').textContent = on ? '★' : '☆';
}

// apply changes list (judged-project views, with byId) and returns the ranking as the
// action a leaves them.
function apply(v, a) {
  const id = a.meta.id;
  if (a.kind === 'finish' && !v.byId.has(id)) {
    const m = a.meta.project;
    const p = { project_id: id, name: m.name, location: m.location, notes: a.body.notes, starred: a.body.starred, feedback: a.body.feedback || '' };
    v.list.push(p);
    v.byId.set(id, p);
  } else if (a.kind === 'undo' && v.byId.has(id)) {
    v.list.splice(v.list.indexOf(v.byId.get(id)), 1);
    v.byId.delete(id);
    v.ranking = v.ranking.filter((x) => x !== id);
  } else if (a.kind === 'rank') {
    v.ranking = a.body.ranking.slice();
  } else if (a.kind === 'star' && v.byId.has(id)) {
    v.byId.get(id).starred = a.body.starred;
  } else if (a.kind === 'notes' && v.byId.has(id)) {
    v.byId.get(id).notes = a.body.notes;
  } else if (a.kind === 'feedback' && v.byId.has(id)) {
    v.byId.get(id).feedback = a.body.feedback;
  }
}

function kept() {
  const list = load('judged', []);
  return { list, byId: new Map(list.map((p) => [p.project_id, p])), ranking: load('ranking', []) };
}

/**
 * judgedView is what the judge has seen and its ranking as they will be once the
 * outbox is sent: the server's last answer with the waiting actions applied in order.
 */
export function judgedView() {
  const v = kept();
  for (const a of S.outbox.items()) apply(v, a);
  v.ranking = v.ranking.filter((id) => v.byId.has(id));
  return v;
}

/** acknowledged applies an action the server accepted to the phone's copy of its state. */
export function acknowledged(a) {
  const v = kept();
  apply(v, a);
  save('judged', v.list);
  save('ranking', v.ranking);
}

/** loadJudged refreshes the server's copy of the judge's projects (kept for offline). */
export async function loadJudged() {
  try {
    const [list, me] = await Promise.all([api('GET', '/api/judge/projects'), api('GET', '/api/judge')]);
    save('judged', Array.isArray(list) ? list : []);
    save('ranking', me.rankings || []);
    S.judge = { ...S.judge, ...me };
    saveMe(S.judge);
  } catch (e) {
    if (!(e instanceof ApiError && (e.status === 401 || e.status === 0))) toast(e.message, true);
  }
  renderJudged();
}

let judgedSig = '';

// renderJudged redraws the list only when something in it changed, so that a refetch
// never throws away notes being typed or a button about to be pressed.
export function renderJudged() {
  const v = judgedView();
  $('#judged-count').textContent = String(v.list.length);
  $('#seen-count').textContent = `${v.list.length} seen`;
  $('#seen-count').hidden = false;
  const sig = JSON.stringify([v.list, v.ranking, S.deliberation]);
  if (sig === judgedSig) return;
  judgedSig = sig;
  $('#rank-locked').hidden = !S.deliberation;
  const ranked = v.ranking;
  const rankedSet = new Set(ranked);
  const unranked = v.list.filter((p) => !rankedSet.has(p.project_id));
  $('#ranked').replaceChildren(...ranked.map((id, i) => judgedItem(v.byId.get(id), i, ranked.length)));
  $('#unranked').replaceChildren(...unranked.map((p) => judgedItem(p, -1, ranked.length)));
  $('#ranked-empty').hidden = ranked.length > 0;
  $('#unranked-empty').hidden = unranked.length > 0 || v.list.length === 0;
  $('#rank-nudge').hidden = unranked.length === 0;
}

function judgedItem(p, idx, n) {
  const locked = S.deliberation;
  const li = h('li', { dataset: { id: p.project_id } });
  const star = h('button', {
    type: 'button', class: 'star small', 'aria-pressed': p.starred ? 'true' : 'false',
    'aria-label': `Star ${p.name}`, disabled: locked,
    onclick: () => {
      S.outbox.add('star', 'PUT', `/api/judge/star/${p.project_id}`, { starred: !p.starred }, { id: p.project_id, label: `the star on “${p.name}”` });
      renderJudged();
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
      h('button', { type: 'button', class: 'small', 'aria-label': `Remove ${p.name} from ranking`, disabled: locked, onclick: () => setRanking(judgedView().ranking.filter((x) => x !== p.project_id)) }, '✕'),
    );
  } else {
    btns.append(h('button', { type: 'button', class: 'small', 'aria-label': `Rank ${p.name}`, disabled: locked, onclick: () => setRanking([...judgedView().ranking, p.project_id]) }, 'Rank'));
  }
  line.append(btns);
  const notesId = `notes-${p.project_id}`;
  const notes = h('textarea', { id: notesId, maxlength: '20000' });
  notes.value = p.notes || '';
  const save = h('button', {
    type: 'button', class: 'small', onclick: () => {
      S.outbox.add('notes', 'PUT', `/api/judge/notes/${p.project_id}`, { notes: notes.value }, { id: p.project_id, label: `your notes on “${p.name}”` });
      toast('Notes saved.');
    },
  }, 'Save notes');
  const details = h('details', {},
    h('summary', {}, p.notes ? 'Notes' : 'Add notes'),
    h('label', { for: notesId }, `Notes on ${p.name}`), notes, save);
  li.append(line, details, feedbackEditor(p));
  return li;
}

// feedbackEditor edits the feedback for the team on a project the judge saw; saving goes
// through the outbox like notes (PUT /api/judge/feedback/:id with its own key).
function feedbackEditor(p) {
  const id = `feedback-${p.project_id}`;
  const field = h('textarea', { id, class: 'feedback', maxlength: String(FEEDBACK_MAX), 'aria-describedby': `${id}-help ${id}-count` });
  field.value = p.feedback || '';
  const counter = h('p', { id: `${id}-count`, class: 'hint char-count', 'aria-live': 'polite', hidden: true });
  field.addEventListener('input', () => countChars(field, counter));
  countChars(field, counter);
  const save = h('button', {
    type: 'button', class: 'small', onclick: () => {
      S.outbox.add('feedback', 'PUT', `/api/judge/feedback/${p.project_id}`, { feedback: field.value }, { id: p.project_id, label: `your feedback for “${p.name}”` });
      toast('Feedback saved.');
    },
  }, 'Save feedback');
  return h('details', {},
    h('summary', {}, p.feedback ? 'Feedback for the team' : 'Add feedback for the team'),
    h('label', { for: id }, `Feedback for ${p.name}`),
    h('p', { id: `${id}-help`, class: 'hint field-help' }, 'Shared with the team after the results, without your name.'),
    field, counter, save);
}

function moveRank(id, delta) {
  const r = judgedView().ranking;
  const i = r.indexOf(id);
  const j = i + delta;
  if (i < 0 || j < 0 || j >= r.length) return;
  [r[i], r[j]] = [r[j], r[i]];
  setRanking(r, id);
}

/** setRanking queues a new ranking (the outbox keeps only the latest waiting one). */
export function setRanking(r, focusId) {
  S.outbox.add('rank', 'POST', '/api/judge/rank', { ranking: r }, { label: 'your ranking' });
  renderJudged();
  if (focusId) {
    const li = document.querySelector(`#ranked li[data-id="${focusId}"]`);
    const b = li && [...li.querySelectorAll('.rank-buttons button')].find((x) => !x.disabled);
    if (b) b.focus();
  }
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
    const r = judgedView().ranking;
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
