// The dashboard's shared state and helpers, for the modules admin.js loads (overview.js,
// judges.js, projects.js, activity.js, settings.js): the lists and settings as last
// loaded (A), API calls that toast their errors (quiet, run), the confirm and prompt
// dialogs (dialog.js underneath), and the small pieces both tables use, their CSV import
// forms included (csvImport). It imports only lib.js and dialog.js, so it is evaluated
// before every module that imports it: their load-time code may use it
// (docs/behaviour.md#dashboard-and-expo, docs/behaviour.md#imports-and-exports).
import { upload, h, $, toast, groupName } from './lib.js';
import { dialog } from './dialog.js';

export const A = {
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

// sessionEnded sends the organiser back to the login form when the session is gone.
function sessionEnded(e) {
  if (e && e.status === 401 && !$('#view-dash').hidden) {
    location.reload();
    return true;
  }
  return false;
}

export async function quiet(p) {
  try { return await p; } catch (e) {
    if (!sessionEnded(e) && e.status !== 404) toast(e.message, true);
    return null;
  }
}

// ---------- dialogs (confirm / prompt / info): dialog.js ----------

export const confirmDanger = (title, text, okText) => dialog(title, h('p', {}, text), { okText, danger: true });

export async function promptNumber(title, label, value, min, max) {
  const input = h('input', { type: 'number', id: 'dialog-input', min, max, value: String(value ?? '') });
  const ok = await dialog(title, [h('label', { for: 'dialog-input' }, label), input]);
  if (!ok || input.value === '') return null;
  return Number(input.value);
}

export async function promptGroup(title) {
  const names = A.options ? A.options.group_names : [];
  const n = A.options ? A.options.num_groups : names.length;
  const sel = h('select', { id: 'dialog-input' });
  for (let i = 0; i < n; i++) sel.append(h('option', { value: String(i) }, groupName({ names }, i)));
  const ok = await dialog(title, [h('label', { for: 'dialog-input' }, 'Group'), sel]);
  return ok ? Number(sel.value) : null;
}

export async function run(p, okMsg) {
  try {
    const r = await p;
    if (okMsg) toast(okMsg);
    return r ?? true;
  } catch (e) {
    if (!sessionEnded(e)) toast(e.message, true);
    return null;
  }
}

// ---------- table helpers (judges.js, projects.js, activity.js) ----------

export const groupNames = () => (A.options ? A.options.group_names : A.groupInfo.names);
// Without groups (multi_group off) the tables leave the Group column out.
export const groupsOff = () => !(A.options ? A.options.multi_group : A.groupInfo.enabled);
export const small = (label, onclick, opts = {}) => h('button', { type: 'button', class: opts.danger ? 'danger small' : 'small', 'aria-label': opts.aria, onclick }, label);
export const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : '–');

// ---------- CSV imports (judges.js, projects.js) ----------

/**
 * csvImport handles the submit of a CSV import form (admin.html's #judge-upload,
 * #project-upload): the file chosen in file goes as "csv", then "hasHeader" from the box
 * the request names (none: not sent) and its own fields, to its path. request() is read
 * at submit: {path, header, fields}. On success the form is reset and done(r) gets the
 * server's answer; a missing file or the server's refusal is shown in error.
 */
export function csvImport(form, file, error, request, done) {
  $(form).addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const err = $(error);
    err.hidden = true;
    const f = $(file).files[0];
    if (!f) { err.textContent = 'Choose a CSV file first.'; err.hidden = false; return; }
    const { path, header, fields = {} } = request();
    const data = new FormData();
    data.append('csv', f);
    if (header) data.append('hasHeader', $(header).checked ? 'true' : 'false');
    for (const [k, v] of Object.entries(fields)) data.append(k, v);
    try {
      const r = await upload(path, data);
      ev.target.reset();
      done(r);
    } catch (e) {
      err.textContent = e.message;
      err.hidden = false;
    }
  });
}
