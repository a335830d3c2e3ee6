// The dashboard's Projects tab (docs/behaviour.md#projects, docs/behaviour.md#imports-and-exports):
// the projects table with its actions (move to another table, prioritize), adding one
// project and the CSV and submissions imports; and the hide, move-to-group and delete
// actions of both tables (judges and projects), with their confirmations.
// judges.js and projects.js import each other: only functions cross between them, never
// at load time.
import { api, h, $, toast, groupName } from './lib.js';
import { A, quiet, run, confirmDanger, promptNumber, promptGroup, groupNames, groupsOff, small, csvImport } from './admin-state.js';
import { DataTable } from './datatable.js';
import { renderAverages } from './overview.js';
import { renderCoverage } from './activity.js';
import { judgeTable, loadJudges } from './judges.js';

export const projectTable = new DataTable($('#projects-table'), {
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

export async function loadProjects() {
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

export async function hideItems(kind, ids, hide) {
  if (await run(api('POST', `/api/${kind}/hide`, { items: ids, hide }), hide ? 'Hidden.' : 'Unhidden.')) {
    if (kind === 'judge') loadJudges(); else loadProjects();
  }
}

export async function moveGroup(kind, ids) {
  const g = await promptGroup(`Move ${ids.length} ${kind}${ids.length === 1 ? '' : 's'} to a group`);
  if (g == null) return;
  if (await run(api('POST', `/api/${kind}/move/group`, { items: ids, group: g }), 'Moved.')) {
    if (kind === 'judge') loadJudges(); else loadProjects();
  }
}

export async function deleteItems(kind, ids) {
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

// A submissions export has its own header row: the header box is off for it, also after
// the form's reset (the reset event comes before the fields go back).
const syncHeader = () => { $('#pu-header').disabled = $('#pu-kind').value === 'submissions'; };
$('#pu-kind').addEventListener('change', syncHeader);
$('#project-upload').addEventListener('reset', () => setTimeout(syncHeader));

// A submissions export has a header row of its own: no "hasHeader".
csvImport('#project-upload', '#pu-file', '#pu-error', () => ($('#pu-kind').value === 'submissions'
  ? { path: '/api/project/submissions' }
  : { path: '/api/project/csv', header: '#pu-header' }), (r) => {
  const skipped = r && r.skipped ? `, skipped ${r.skipped}` : '';
  toast(`Imported ${r && r.added != null ? r.added : ''} projects${skipped}.`);
  loadProjects();
});
