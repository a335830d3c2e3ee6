// Conflicts of interest in the dashboard (docs/behaviour.md#on-the-floor): import a CSV
// of judge (email or code) and project (name or table), list the conflicts per judge,
// remove one. A judge's own "I know this team" skips show up here too.
import { api, upload, h, $, toast } from './lib.js';

const root = $('#conflicts-root');
const file = h('input', { type: 'file', id: 'cf-file', accept: '.csv,text/csv' });
const header = h('input', { type: 'checkbox', id: 'cf-header' });
header.defaultChecked = true; // form.reset() keeps it ticked
const err = h('p', { class: 'banner bad', role: 'alert', id: 'cf-error', hidden: true });
const list = h('div', { id: 'cf-list', 'aria-live': 'polite' });

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
    toast(`Imported ${r.added} conflicts.`);
    form.reset();
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
      h('span', {}, c.project_name, ' ', h('span', { class: 'hint' }, c.source === 'judge' ? '(said by the judge)' : '(imported)')),
      ' ',
      h('button', { type: 'button', class: 'small', onclick: () => remove(c), 'aria-label': `Remove the conflict of ${c.judge_name} with ${c.project_name}` }, 'Remove')))))));
}

async function load() {
  try {
    render(await api('GET', '/api/admin/conflicts'));
  } catch (e) {
    if (e.status !== 401) list.replaceChildren(h('p', { class: 'banner bad' }, e.message));
  }
}

root.replaceChildren(h('h2', { id: 'cf-h' }, 'Conflicts of interest'), form, list);
$('#tab-judges').addEventListener('click', load);
load();
