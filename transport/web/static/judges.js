// The dashboard's Judges tab (docs/behaviour.md#judges, docs/behaviour.md#dashboard-and-expo):
// the judges table with its actions, a judge's details (ranking, judged projects, skips
// and flags), the login-code email state and resend, adding one judge and the CSV
// import. Hide, move to a group and delete are projects.js's, shared by both tables.
// judges.js and projects.js import each other: only functions cross between them, never
// at load time.
import { api, h, $, toast, groupName } from './lib.js';
import { dialog } from './dialog.js';
import { A, quiet, run, groupNames, groupsOff, small, when, csvImport } from './admin-state.js';
import { DataTable } from './datatable.js';
import { renderAverages } from './overview.js';
import { hideItems, moveGroup, deleteItems } from './projects.js';

export const judgeTable = new DataTable($('#judges-table'), {
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

export async function loadJudges() {
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

csvImport('#judge-upload', '#ju-file', '#ju-error', () => ({
  path: '/api/judge/csv', header: '#ju-header', fields: { noSend: $('#ju-nosend').checked ? 'true' : 'false' },
}), (r) => {
  toast(`Imported ${r && r.added != null ? r.added : ''} judges.`);
  loadJudges();
});
