// Conflicts of interest in the dashboard (docs/behaviour.md#on-the-floor): import a CSV
// of judge (email or code) and project (name or table), list the conflicts per judge,
// remove one. A judge's own "I know this team" skips show up here too. A conflict
// imported after the judge already judged the project is listed for the organiser to
// keep or remove that judgement (docs/behaviour.md#a-conflict-found-after-the-judgement).
import { api, upload, h, $, toast } from './lib.js';
import { dialog } from './dialog.js';

const root = $('#conflicts-root');
const file = h('input', { type: 'file', id: 'cf-file', accept: '.csv,text/csv' });
const header = h('input', { type: 'checkbox', id: 'cf-header' });
header.defaultChecked = true; // form.reset() keeps it ticked
const err = h('p', { class: 'banner bad', role: 'alert', id: 'cf-error', hidden: true });
const list = h('div', { id: 'cf-list', 'aria-live': 'polite' });
// Judged cases of the last import the organiser has not decided yet.
let pending = [];
let lastAdded = 0;
const judgedBox = h('div', { id: 'cf-judged', class: 'banner warn', role: 'region', 'aria-labelledby': 'cf-judged-h', hidden: true });

const form = h('form', { id: 'cf-upload', novalidate: true },
  h('p', { class: 'hint' }, 'Columns: judge email or login code, project name or table number. Every row is imported, or none.'),
  h('label', { for: 'cf-file' }, 'CSV file'), file,
  h('label', { class: 'inline', for: 'cf-header' }, header, ' First row is a header'),
  err,
  h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Import conflicts')));

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  err.hidden = true;
  const f = file.files[0];
  if (!f) { err.textContent = 'Choose a CSV file first.'; err.hidden = false; return; }
  const fd = new FormData();
  fd.append('csv', f);
  fd.append('hasHeader', header.checked ? 'true' : 'false');
  try {
    const r = await upload('/api/admin/conflicts/csv', fd);
    pending = r.judged || [];
    lastAdded = r.added;
    // With cases to decide the box below says it all: a toast would lie over its buttons.
    if (!pending.length) toast(`Imported ${r.added} conflicts.`);
    form.reset();
    renderJudged();
    load();
  } catch (e) {
    err.textContent = `Nothing was imported: ${e.message}`;
    err.hidden = false;
  }
});

async function remove(c) {
  try {
    await api('DELETE', `/api/admin/conflicts/${c.judge_id}/${c.project_id}`);
    toast(`${c.judge_name} may be sent to ${c.project_name} again.`);
  } catch (e) {
    toast(e.message, true);
  }
  load();
}

const caseKey = (c) => `${c.judge_id}/${c.project_id}`;
const dropCase = (c) => { pending = pending.filter((p) => caseKey(p) !== caseKey(c)); renderJudged(); };

// removeJudgement asks, then takes the judge's view of the project out of the judging
// data (seen, ranking, star, scores); the conflict itself stays.
async function removeJudgement(c) {
  const ok = await dialog(`Remove ${c.judge_name}'s judgement of ${c.project_name}?`,
    h('p', {}, `${c.judge_name}'s visit to ${c.project_name} leaves the results: the view, the star and the notes, and its place in ${c.judge_name}'s ranking. `
      + `${c.judge_name} will not be sent to ${c.project_name} again. This cannot be undone.`),
    { okText: 'Remove judgement', danger: true });
  if (!ok) return;
  try {
    await api('DELETE', `/api/admin/conflicts/${c.judge_id}/${c.project_id}/judgement`);
    toast(`${c.judge_name}'s judgement of ${c.project_name} no longer counts.`);
    dropCase(c);
  } catch (e) {
    toast(e.message, true);
  }
  load();
}

function keepJudgement(c) {
  toast(`${c.judge_name}'s judgement of ${c.project_name} still counts. You can remove it later from the list below.`);
  dropCase(c);
}

function renderJudged() {
  judgedBox.hidden = !pending.length;
  if (!pending.length) { judgedBox.replaceChildren(); return; }
  judgedBox.replaceChildren(
    h('h3', { id: 'cf-judged-h' }, `Imported ${lastAdded} conflicts. Already judged: ${pending.length} ${pending.length === 1 ? 'conflict' : 'conflicts'} to decide`),
    h('p', {}, 'These judges had already judged the project before the conflict was imported. Their judgement still counts in the ranking and the scores until you remove it.'),
    h('ul', { class: 'cf-cases' }, ...pending.map((c) => h('li', { 'data-case': caseKey(c) },
      h('span', {}, h('strong', {}, c.judge_name), ' judged ', h('strong', {}, c.project_name)), ' ',
      h('span', { class: 'row' },
        h('button', { type: 'button', class: 'small', onclick: () => keepJudgement(c), 'aria-label': `Keep ${c.judge_name}'s judgement of ${c.project_name}` }, 'Keep judgement'),
        h('button', { type: 'button', class: 'small danger', onclick: () => removeJudgement(c), 'aria-label': `Remove ${c.judge_name}'s judgement of ${c.project_name}` }, 'Remove judgement'))))));
}

function render(all) {
  if (!all.length) {
    list.replaceChildren(h('p', { class: 'muted' }, 'No conflicts of interest.'));
    return;
  }
  const byJudge = new Map();
  for (const c of all) {
    if (!byJudge.has(c.judge_id)) byJudge.set(c.judge_id, []);
    byJudge.get(c.judge_id).push(c);
  }
  list.replaceChildren(...[...byJudge.values()].map((cs) => h('div', { class: 'cf-judge' },
    h('h3', {}, `${cs[0].judge_name} (${cs.length})`),
    h('ul', {}, ...cs.map((c) => h('li', {},
      h('span', {}, c.project_name, ' ', h('span', { class: 'hint' }, c.source === 'judge' ? '(said by the judge)' : '(imported)'),
        c.judged ? h('span', { class: 'pill hidden-state', title: 'The judge judged this project before the conflict was recorded; that judgement counts in the results' }, 'judged: counts') : ''),
      ' ',
      c.judged ? h('button', { type: 'button', class: 'small', onclick: () => removeJudgement(c), 'aria-label': `Remove ${c.judge_name}'s judgement of ${c.project_name}` }, 'Remove judgement') : '',
      ' ',
      h('button', { type: 'button', class: 'small', onclick: () => remove(c), 'aria-label': `Remove the conflict of ${c.judge_name} with ${c.project_name}` }, 'Remove conflict')))))));
}

async function load() {
  try {
    render(await api('GET', '/api/admin/conflicts'));
  } catch (e) {
    if (e.status !== 401) list.replaceChildren(h('p', { class: 'banner bad' }, e.message));
  }
}

root.replaceChildren(h('h2', { id: 'cf-h' }, 'Conflicts of interest'), form, judgedBox, list);
$('#tab-judges').addEventListener('click', load);
load();
