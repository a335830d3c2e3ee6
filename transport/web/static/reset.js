// Reset in the dashboard (docs/behaviour.md#resets): pick what to clear, read what that means, type
// RESET, and get the backup the server wrote just before, with its download link and
// the command that restores it.
import { api, h, $, toast } from './lib.js';

const WORD = 'RESET';

const TYPES = [
  {
    type: 'judging-data', label: 'Judging data',
    what: 'Clears every view, seen count, ranking, star, note, flag and current assignment. Judges, projects, the clock and the settings stay. Use it after a dry run.',
  },
  {
    type: 'rankings', label: 'Rankings only',
    what: 'Clears every judge’s ranking. Views, stars, notes and flags stay. Until judges rank again, the Results tab’s order comes from stars alone (it says so).',
  },
  {
    type: 'judges', label: 'Judges',
    what: 'Removes every judge (their login codes stop working) and all judging data. Projects stay.',
  },
  {
    type: 'projects', label: 'Projects',
    what: 'Removes every project and all judging data. Judges stay, with nothing judged.',
  },
  {
    type: 'all', label: 'Everything',
    what: 'Removes all judges, projects, flags and judging data, sets the clock back to 0:00:00 and every setting (the event name too) back to its default.',
  },
];

const root = $('#reset-root');
const word = h('input', { type: 'text', id: 'reset-confirm', autocomplete: 'off', spellcheck: 'false', autocapitalize: 'characters', 'aria-describedby': 'reset-confirm-hint' });
const go = h('button', { type: 'submit', class: 'danger', id: 'reset-go', disabled: true }, 'Reset');
const err = h('p', { class: 'banner bad', role: 'alert', id: 'reset-error', hidden: true });
const result = h('div', { id: 'reset-result', class: 'banner ok', role: 'status', tabindex: '-1', hidden: true });

const chosen = () => {
  const r = root.querySelector('input[name=reset-type]:checked');
  return TYPES.find((t) => t.type === (r && r.value)) || null;
};

function update() {
  const t = chosen();
  go.disabled = !t || word.value.trim() !== WORD;
  go.textContent = t ? `Reset: ${t.label.toLowerCase()}` : 'Reset';
}

const form = h('form', { id: 'reset-form', class: 'card danger-zone', novalidate: true, 'aria-labelledby': 'reset-h' },
  h('h2', { id: 'reset-h' }, 'Reset for a new run'),
  h('p', { class: 'muted' }, 'A backup of everything is written before any reset. Site content (schedule, sponsors, FAQ) and the audit log are never touched.'),
  h('fieldset', { class: 'reset-types' },
    h('legend', {}, 'What to clear'),
    ...TYPES.map((t) => h('label', { class: 'reset-type', for: `reset-${t.type}` },
      h('input', { type: 'radio', name: 'reset-type', id: `reset-${t.type}`, value: t.type, onchange: update }),
      h('span', {}, h('strong', {}, t.label), h('span', { class: 'hint' }, t.what))))),
  h('label', { for: 'reset-confirm' }, `Type ${WORD} to confirm`),
  h('p', { class: 'hint', id: 'reset-confirm-hint' }, 'In capital letters. This cannot be undone from the dashboard; only the backup brings the data back.'),
  h('div', { class: 'row' }, h('div', { class: 'grow' }, word), go),
  err,
  result);

word.addEventListener('input', update);

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const t = chosen();
  if (!t || word.value.trim() !== WORD) return;
  err.hidden = true;
  result.hidden = true;
  go.disabled = true;
  let r;
  try {
    r = await api('POST', '/api/admin/reset', { type: t.type });
  } catch (e) {
    if (e.status === 401) { location.reload(); return; }
    err.textContent = `Nothing was reset: ${e.message}`;
    err.hidden = false;
    update();
    return;
  }
  word.value = '';
  update();
  showBackup(t, r.backup);
  toast(`Reset done: ${t.label.toLowerCase()}.`);
});

function showBackup(t, name) {
  const href = `/api/admin/backup/${encodeURIComponent(name)}`;
  result.replaceChildren(
    h('p', {}, h('strong', {}, `Reset done (${t.label.toLowerCase()}).`), ' The state just before it was saved as ',
      h('a', { href, download: name, id: 'reset-backup-link' }, name), '.'),
    h('p', {}, 'To go back to it: stop the server, restore the backup into an empty data directory and start the server on that directory:'),
    h('pre', { class: 'cmd', id: 'reset-restore-cmd', tabindex: '0' }, `podium restore ${name} /path/to/empty-data-dir`),
    h('p', { class: 'hint' }, `Use the downloaded file, or DATA_DIR/backups/${name} on the server.`));
  result.hidden = false;
  result.focus();
}

root.replaceChildren(form);
