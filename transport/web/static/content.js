// "Site content" tab: the schedule (day by day), sponsors (with logos) and FAQ that the
// public content API (/v1/public/...) serves to the event website, over the admin
// content API (/api/admin/content/...). Import and export of the whole document.
// Changes made elsewhere (another dashboard, the CLI) arrive as "changed" {kind:
// "content"} on the dashboard's socket and are shown at once.
import { api, h, $, toast, throttle } from './lib.js';
import { dialog, onSocket, whenShown } from './dialog.js';

const KINDS = ['schedule', 'sponsors', 'faq'];
const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/svg+xml'];
const MAX_LOGO = 1024 * 1024; // bytes, decoded (docs/behaviour.md#public-content-api)
const TIERS = ['Platinum', 'Gold', 'Silver', 'Bronze', 'Partner', 'Community'];

const C = { schedule: [], sponsors: [], faq: [], loaded: false };
const root = $('#content-root');
const panel = $('#panel-content');

// ---------- helpers ----------

const pad = (n) => String(n).padStart(2, '0');

/** toLocalInput turns an RFC 3339 time into a datetime-local value (browser time zone). */
function toLocalInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** fromLocalInput turns a datetime-local value into RFC 3339 UTC, or null. */
function fromLocalInput(v) {
  if (!v) return null;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return null;
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const dayKey = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const hhmm = (d) => d.toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });
const dayTitle = (d) => d.toLocaleDateString([], { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
const tagList = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const byOrder = (a, b) => a.display_order - b.display_order || String(a.name || a.question).localeCompare(String(b.name || b.question));
const small = (label, onclick, aria, danger) => h('button', { type: 'button', class: danger ? 'danger small' : 'small', 'aria-label': aria, onclick }, label);

function fail(el, msg) {
  el.textContent = msg;
  el.hidden = false;
}

async function save(method, path, body, errEl, okMsg) {
  errEl.hidden = true;
  try {
    const r = await api(method, path, body);
    if (okMsg) toast(okMsg);
    return r || true;
  } catch (e) {
    if (e.status === 401) { location.reload(); return null; }
    fail(errEl, e.status === 404 && method === 'PUT'
      ? 'This entry no longer exists: it was deleted or replaced elsewhere (an import, another dashboard). Cancel, then add it again.'
      : e.message);
    return null;
  }
}

// ---------- loading ----------

async function load() {
  const lists = await Promise.all(KINDS.map((k) => api('GET', `/api/admin/content/${k}`).then((r) => r.data || []).catch((e) => {
    if (e.status === 401) location.reload();
    return null;
  })));
  KINDS.forEach((k, i) => { if (lists[i]) C[k] = lists[i]; });
  C.loaded = true;
  render();
  api('GET', '/api/admin/public-api').then(renderAPIState).catch(() => {});
}

// renderAPIState says whether the event website can read this content: without
// PUBLIC_API_KEY the public routes answer 503 (docs/behaviour.md#public-api-state-on-the-dashboard).
function renderAPIState(st) {
  const paths = (st.paths || []).join(', ');
  if (st.enabled) {
    el.apiState.className = 'banner ok';
    el.apiState.replaceChildren(h('span', { class: 'pill ok-state' }, 'Public API: on'), ' ',
      `The event website reads ${paths} with the key in the ${st.header} header.`);
    return;
  }
  el.apiState.className = 'banner warn';
  el.apiState.replaceChildren(
    h('p', {}, h('span', { class: 'pill hidden-state' }, 'Public API: off'), ' ',
      `The event website cannot read this content yet: ${paths} answer 503 ("public content API is disabled") because ${st.env} is not set.`),
    h('p', {}, `To turn it on, restart Podium with ${st.env} set to a secret of your choice, and give the website's developers that secret for the ${st.header} header:`),
    h('pre', { class: 'cmd' }, `${st.env}=$(openssl rand -hex 24) make run`),
    h('p', { class: 'hint' }, `With Docker Compose, set ${st.env} in the compose file's environment. You can edit the content below meanwhile: it is kept and served once the API is on.`));
}

const reload = throttle(() => { if (!panel.hidden) load(); else C.loaded = false; }, 500);

onSocket((type, d) => {
  if ((type === 'changed' && d.kind === 'content') || type === 'resync') reload();
});
whenShown(panel, () => load());

// ---------- page skeleton ----------

const el = {};

function field(id, label, input, hint) {
  input.id = id;
  return h('div', {}, h('label', { for: id }, label, hint ? h('span', { class: 'hint' }, ` (${hint})`) : null), input);
}

function build() {
  // Import / export.
  el.importFile = h('input', { type: 'file', id: 'content-import-file', class: 'visually-hidden', accept: '.json,application/json' });
  el.importErr = h('p', { class: 'banner bad', role: 'alert', id: 'content-import-error', hidden: true });
  el.exportLink = h('a', { id: 'content-export-link', hidden: true }, 'Download');
  el.apiState = h('div', { id: 'content-api-state', role: 'status' });
  const io = h('div', { class: 'card' },
    h('h2', {}, 'Site content'),
    h('p', { class: 'muted' }, 'The schedule, sponsors and FAQ below are what the event website gets from the public content API (/v1/public/schedule, /sponsors, /faq). Times are shown and entered in this browser’s time zone.'),
    h('div', { class: 'row' },
      h('button', { type: 'button', id: 'content-export', onclick: exportDoc }, 'Export all (JSON)'),
      h('label', { for: 'content-import-file', class: 'button file-button' }, 'Import JSON…'),
      el.importFile,
      h('span', { class: 'hint' }, 'An import replaces the whole schedule, sponsor list and FAQ.'),
      el.exportLink),
    el.importErr,
    el.apiState);
  el.importFile.addEventListener('change', importDoc);

  root.replaceChildren(io, buildSchedule(), buildSponsors(), buildFAQ());
}

// ---------- schedule ----------

function buildSchedule() {
  const f = el.sc = {
    name: h('input', { type: 'text', maxlength: '200', required: true }),
    start: h('input', { type: 'datetime-local', required: true }),
    end: h('input', { type: 'datetime-local', required: true }),
    location: h('input', { type: 'text', maxlength: '200' }),
    tags: h('input', { type: 'text' }),
    desc: h('textarea', { maxlength: '20000' }),
    err: h('p', { class: 'banner bad', role: 'alert', id: 'sc-error', hidden: true }),
    title: h('h3', {}, 'Add a schedule entry'),
  };
  f.form = h('form', { id: 'sc-form', class: 'editor', novalidate: true, hidden: true },
    f.title,
    field('sc-name', 'Name', f.name),
    h('div', { class: 'two' }, field('sc-start', 'Starts', f.start), field('sc-end', 'Ends', f.end)),
    h('div', { class: 'two' }, field('sc-location', 'Location', f.location), field('sc-tags', 'Tags', f.tags, 'comma separated')),
    field('sc-desc', 'Description', f.desc),
    f.err,
    h('div', { class: 'row mt' }, h('button', { type: 'submit', class: 'primary', id: 'sc-save' }, 'Save'),
      h('button', { type: 'button', onclick: () => closeEditor(f) }, 'Cancel')));
  f.start.addEventListener('change', () => {
    f.end.min = f.start.value;
    if (f.start.value && (!f.end.value || f.end.value < f.start.value)) f.end.value = f.start.value;
    checkTimes(f);
  });
  f.end.addEventListener('change', () => checkTimes(f));
  f.form.addEventListener('submit', saveSchedule);
  el.scList = h('div', { id: 'sc-list' });
  return h('section', { class: 'card', 'aria-labelledby': 'sc-h' },
    h('div', { class: 'row' }, h('h2', { id: 'sc-h' }, 'Schedule'), h('span', { class: 'spacer' }),
      h('button', { type: 'button', class: 'primary', id: 'sc-add', onclick: () => editSchedule(null) }, 'Add entry')),
    f.form, el.scList);
}

/** checkTimes shows the start/end problem, if any, and returns whether the times are fine. */
function checkTimes(f) {
  const s = fromLocalInput(f.start.value), e = fromLocalInput(f.end.value);
  let msg = '';
  if (!s) msg = 'Give a start date and time.';
  else if (!e) msg = 'Give an end date and time.';
  else if (Date.parse(e) < Date.parse(s)) msg = 'The entry ends before it starts.';
  f.end.setCustomValidity(msg && e ? msg : '');
  f.end.setAttribute('aria-invalid', msg && e ? 'true' : 'false');
  if (msg) fail(f.err, msg); else f.err.hidden = true;
  return !msg;
}

function openEditor(f, title, focus) {
  f.title.textContent = title;
  f.err.hidden = true;
  f.form.hidden = false;
  focus.focus();
}

function closeEditor(f) {
  f.form.hidden = true;
  delete f.form.dataset.id;
  f.form.closest('section').querySelector('button.primary').focus(); // back to "Add …"
}

function editSchedule(e) {
  const f = el.sc;
  f.form.dataset.id = e ? e.id : '';
  f.name.value = e ? e.event_name : '';
  f.start.value = e ? toLocalInput(e.start_time) : '';
  f.end.value = e ? toLocalInput(e.end_time) : '';
  f.end.min = f.start.value;
  f.location.value = e ? e.location : '';
  f.tags.value = e ? (e.tags || []).join(', ') : '';
  f.desc.value = e ? e.description : '';
  openEditor(f, e ? `Edit “${e.event_name}”` : 'Add a schedule entry', f.name);
}

async function saveSchedule(ev) {
  ev.preventDefault();
  const f = el.sc;
  if (!f.name.value.trim()) { fail(f.err, 'Give the entry a name.'); f.name.focus(); return; }
  if (!checkTimes(f)) return;
  const body = {
    event_name: f.name.value.trim(), start_time: fromLocalInput(f.start.value), end_time: fromLocalInput(f.end.value),
    location: f.location.value.trim(), tags: tagList(f.tags.value), description: f.desc.value,
  };
  const id = f.form.dataset.id;
  const r = await save(id ? 'PUT' : 'POST', `/api/admin/content/schedule${id ? `/${id}` : ''}`, body, f.err, id ? 'Schedule entry saved.' : 'Schedule entry added.');
  if (r) { closeEditor(f); load(); }
}

async function remove(kind, id, what) {
  const ok = await dialog(`Delete ${what}?`, h('p', {}, 'It disappears from the event website at once. This cannot be undone (export first to keep a copy).'), { okText: 'Delete', danger: true });
  if (!ok) return;
  try {
    await api('DELETE', `/api/admin/content/${kind}/${id}`);
    toast('Deleted.');
  } catch (e) {
    toast(e.message, true);
  }
  load();
}

function renderSchedule() {
  const list = [...C.schedule].sort((a, b) => Date.parse(a.start_time) - Date.parse(b.start_time));
  if (!list.length) {
    el.scList.replaceChildren(h('p', { class: 'muted' }, 'No schedule entries yet.'));
    return;
  }
  const days = new Map();
  for (const e of list) {
    const k = dayKey(new Date(e.start_time));
    if (!days.has(k)) days.set(k, []);
    days.get(k).push(e);
  }
  el.scList.replaceChildren(...[...days.entries()].map(([k, entries]) => h('section', { class: 'sched-day', dataset: { day: k } },
    h('h3', {}, dayTitle(new Date(entries[0].start_time)), h('span', { class: 'hint' }, ` · ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`)),
    h('ol', { class: 'sched-list' }, ...entries.map((e) => {
      const s = new Date(e.start_time), en = new Date(e.end_time);
      const endText = dayKey(en) === dayKey(s) ? hhmm(en) : `${en.toLocaleDateString([], { weekday: 'short' })} ${hhmm(en)}`;
      return h('li', { class: 'sched-item', dataset: { id: e.id } },
        h('div', { class: 'sched-time' }, h('time', { datetime: e.start_time }, hhmm(s)), '–', h('time', { datetime: e.end_time }, endText)),
        h('div', { class: 'sched-body' },
          h('strong', {}, e.event_name),
          e.location ? h('span', { class: 'hint' }, ` · ${e.location}`) : null,
          (e.tags || []).length ? h('div', {}, ...e.tags.map((t) => h('span', { class: 'pill' }, t))) : null,
          e.description ? h('p', { class: 'hint clamp' }, e.description) : null),
        h('div', { class: 'row actions' },
          small('Edit', () => editSchedule(e), `Edit ${e.event_name}`),
          small('Delete', () => remove('schedule', e.id, `“${e.event_name}”`), `Delete ${e.event_name}`, true)));
    })))));
}

// ---------- sponsors ----------

/** sniff checks a file's first bytes against its declared image type. */
function sniff(type, b) {
  const starts = (...xs) => xs.every((x, i) => b[i] === x);
  switch (type) {
    case 'image/png': return starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
    case 'image/jpeg': return starts(0xff, 0xd8, 0xff);
    case 'image/gif': return String.fromCharCode(...b.slice(0, 6)) === 'GIF87a' || String.fromCharCode(...b.slice(0, 6)) === 'GIF89a';
    case 'image/webp': return String.fromCharCode(...b.slice(0, 4)) === 'RIFF' && String.fromCharCode(...b.slice(8, 12)) === 'WEBP';
    case 'image/svg+xml': {
      let text;
      try { text = new TextDecoder('utf-8', { fatal: true }).decode(b); } catch { return false; }
      text = text.replace(/^\uFEFF/, '').trimStart();
      return (text.startsWith('<svg') || text.startsWith('<?xml')) && /<svg[\s>]/.test(text);
    }
    default: return false;
  }
}

function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

const niceType = (t) => ({ 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/webp': 'WebP', 'image/gif': 'GIF', 'image/svg+xml': 'SVG' }[t] || t || 'unknown');
const mib = (n) => `${(n / 1024 / 1024).toFixed(2)} MiB`;

function buildSponsors() {
  const f = el.sp = {
    name: h('input', { type: 'text', maxlength: '200', required: true }),
    tier: h('input', { type: 'text', maxlength: '200', list: 'sp-tiers' }),
    website: h('input', { type: 'url', placeholder: 'https://', inputmode: 'url' }),
    order: h('input', { type: 'number', step: '1' }),
    desc: h('textarea', { maxlength: '20000' }),
    logo: h('input', { type: 'file', accept: LOGO_TYPES.join(',') }),
    preview: h('img', { id: 'sp-preview', alt: 'Logo preview', hidden: true }),
    noLogo: h('span', { class: 'hint', id: 'sp-nologo' }, 'No logo'),
    logoErr: h('p', { class: 'banner bad', role: 'alert', id: 'sp-logo-error', hidden: true }),
    err: h('p', { class: 'banner bad', role: 'alert', id: 'sp-error', hidden: true }),
    title: h('h3', {}, 'Add a sponsor'),
    pending: null, // {data, type} a new logo; {data: '', type: ''} removes it; null keeps it
  };
  f.clear = h('button', { type: 'button', class: 'small', id: 'sp-clear-logo', onclick: () => setLogo(f, { data: '', type: '' }) }, 'Remove logo');
  f.form = h('form', { id: 'sp-form', class: 'editor', novalidate: true, hidden: true },
    f.title,
    h('datalist', { id: 'sp-tiers' }, ...TIERS.map((t) => h('option', { value: t }))),
    h('div', { class: 'two' }, field('sp-name', 'Name', f.name), field('sp-tier', 'Tier', f.tier)),
    h('div', { class: 'two' }, field('sp-website', 'Website', f.website), field('sp-order', 'Display order', f.order, 'lower comes first')),
    field('sp-desc', 'Description', f.desc),
    h('div', { class: 'logo-pick' },
      h('div', { class: 'logo-box' }, f.preview, f.noLogo),
      h('div', { class: 'grow' }, field('sp-logo', 'Logo', f.logo, 'PNG, JPEG, WebP, GIF or SVG, at most 1 MiB'), h('div', { class: 'row mt' }, f.clear))),
    f.logoErr,
    f.err,
    h('div', { class: 'row mt' }, h('button', { type: 'submit', class: 'primary', id: 'sp-save' }, 'Save'),
      h('button', { type: 'button', onclick: () => closeEditor(f) }, 'Cancel')));
  f.logo.addEventListener('change', () => pickLogo(f));
  f.form.addEventListener('submit', saveSponsor);
  el.spList = h('ol', { id: 'sp-list', class: 'sortable' });
  el.spEmpty = h('p', { class: 'muted' }, 'No sponsors yet.');
  return h('section', { class: 'card', 'aria-labelledby': 'sp-h' },
    h('div', { class: 'row' }, h('h2', { id: 'sp-h' }, 'Sponsors'), h('span', { class: 'spacer' }),
      h('button', { type: 'button', class: 'primary', id: 'sp-add', onclick: () => editSponsor(null) }, 'Add sponsor')),
    f.form, el.spEmpty, el.spList);
}

function setLogo(f, logo, shown) {
  f.pending = logo;
  const src = shown || (logo && logo.data ? `data:${logo.type};base64,${logo.data}` : '');
  f.preview.hidden = !src;
  f.noLogo.hidden = !!src;
  if (src) f.preview.src = src; else f.preview.removeAttribute('src');
  f.clear.disabled = !src;
  if (logo && !logo.data) f.logo.value = '';
}

/** pickLogo checks the chosen file (type, size, signature) and previews it; a refused file changes nothing. */
async function pickLogo(f) {
  f.logoErr.hidden = true;
  const file = f.logo.files[0];
  if (!file) return;
  const refuse = (msg) => { fail(f.logoErr, msg); f.logo.value = ''; f.logo.setAttribute('aria-invalid', 'true'); };
  if (!LOGO_TYPES.includes(file.type)) { refuse(`“${file.name}” is a ${niceType(file.type)} file: a logo must be PNG, JPEG, WebP, GIF or SVG.`); return; }
  if (file.size > MAX_LOGO) { refuse(`“${file.name}” is ${mib(file.size)}: a logo can be at most 1 MiB.`); return; }
  if (file.size === 0) { refuse(`“${file.name}” is empty.`); return; }
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (!sniff(file.type, bytes)) { refuse(`“${file.name}” does not contain a ${niceType(file.type)} image.`); return; }
  f.logo.setAttribute('aria-invalid', 'false');
  setLogo(f, { data: base64(bytes), type: file.type });
}

function editSponsor(s) {
  const f = el.sp;
  f.form.dataset.id = s ? s.id : '';
  f.name.value = s ? s.name : '';
  f.tier.value = s ? s.tier : '';
  f.website.value = s ? s.website_url : '';
  f.order.value = String(s ? s.display_order : nextOrder(C.sponsors));
  f.desc.value = s ? s.description : '';
  f.logo.value = '';
  f.logoErr.hidden = true;
  setLogo(f, null, s && s.logo_data ? `data:${s.logo_content_type};base64,${s.logo_data}` : '');
  openEditor(f, s ? `Edit “${s.name}”` : 'Add a sponsor', f.name);
}

const nextOrder = (list) => (list.length ? Math.max(...list.map((x) => x.display_order)) + 1 : 1);

async function saveSponsor(ev) {
  ev.preventDefault();
  const f = el.sp;
  if (!f.name.value.trim()) { fail(f.err, 'Give the sponsor a name.'); f.name.focus(); return; }
  const web = f.website.value.trim();
  if (web && !/^https?:\/\/[^\s/]+/i.test(web)) { fail(f.err, 'The website must be a full address starting with https:// (or left empty).'); f.website.focus(); return; }
  const order = Number(f.order.value || 0);
  if (!Number.isInteger(order)) { fail(f.err, 'The display order must be a whole number.'); f.order.focus(); return; }
  const body = { name: f.name.value.trim(), tier: f.tier.value.trim(), website_url: web, description: f.desc.value, display_order: order };
  if (f.pending) { body.logo_data = f.pending.data; body.logo_content_type = f.pending.type; }
  const id = f.form.dataset.id;
  const r = await save(id ? 'PUT' : 'POST', `/api/admin/content/sponsors${id ? `/${id}` : ''}`, body, f.err, id ? 'Sponsor saved.' : 'Sponsor added.');
  if (r) { closeEditor(f); load(); }
}

/** move moves entry i of the sorted list by delta places and renumbers display_order 1..N. */
async function move(kind, sorted, i, delta) {
  const j = i + delta;
  if (j < 0 || j >= sorted.length) return;
  const arr = [...sorted];
  const [x] = arr.splice(i, 1);
  arr.splice(j, 0, x);
  try {
    for (const [k, e] of arr.entries()) {
      if (e.display_order !== k + 1) await api('PUT', `/api/admin/content/${kind}/${e.id}`, { display_order: k + 1 });
    }
  } catch (e) {
    toast(e.message, true);
  }
  await load();
  const btn = document.querySelector(`#${kind === 'faq' ? 'faq' : 'sp'}-list li[data-id="${x.id}"] button[data-move="${delta < 0 ? 'up' : 'down'}"]`);
  if (btn && !btn.disabled) btn.focus();
}

function moveButtons(kind, sorted, i, label) {
  return [
    h('button', { type: 'button', class: 'small', 'aria-label': `Move ${label} up`, disabled: i === 0, dataset: { move: 'up' }, onclick: () => move(kind, sorted, i, -1) }, '▲'),
    h('button', { type: 'button', class: 'small', 'aria-label': `Move ${label} down`, disabled: i === sorted.length - 1, dataset: { move: 'down' }, onclick: () => move(kind, sorted, i, 1) }, '▼'),
  ];
}

function renderSponsors() {
  const sorted = [...C.sponsors].sort(byOrder);
  el.spEmpty.hidden = sorted.length > 0;
  el.spList.replaceChildren(...sorted.map((s, i) => h('li', { dataset: { id: s.id } },
    h('div', { class: 'logo-box small' }, s.logo_data
      ? h('img', { src: `data:${s.logo_content_type};base64,${s.logo_data}`, alt: `${s.name} logo` })
      : h('span', { class: 'hint' }, 'no logo')),
    h('div', { class: 'grow' },
      h('strong', {}, s.name), s.tier ? h('span', { class: 'pill' }, s.tier) : null,
      s.website_url ? h('div', {}, h('a', { href: s.website_url, target: '_blank', rel: 'noopener noreferrer' }, s.website_url)) : null,
      h('div', { class: 'hint' }, `Order ${s.display_order}`)),
    h('div', { class: 'row actions' },
      ...moveButtons('sponsors', sorted, i, s.name),
      small('Edit', () => editSponsor(s), `Edit ${s.name}`),
      small('Delete', () => remove('sponsors', s.id, `sponsor “${s.name}”`), `Delete ${s.name}`, true)))));
}

// ---------- FAQ ----------

function buildFAQ() {
  const f = el.faq = {
    question: h('input', { type: 'text', maxlength: '200', required: true }),
    answer: h('textarea', { maxlength: '20000', required: true }),
    err: h('p', { class: 'banner bad', role: 'alert', id: 'faq-error', hidden: true }),
    title: h('h3', {}, 'Add a question'),
  };
  f.form = h('form', { id: 'faq-form', class: 'editor', novalidate: true, hidden: true },
    f.title,
    field('faq-question', 'Question', f.question),
    field('faq-answer', 'Answer', f.answer),
    f.err,
    h('div', { class: 'row mt' }, h('button', { type: 'submit', class: 'primary', id: 'faq-save' }, 'Save'),
      h('button', { type: 'button', onclick: () => closeEditor(f) }, 'Cancel')));
  f.form.addEventListener('submit', saveFAQ);
  el.faqList = h('ol', { id: 'faq-list', class: 'sortable' });
  el.faqEmpty = h('p', { class: 'muted' }, 'No questions yet.');
  return h('section', { class: 'card', 'aria-labelledby': 'faq-h' },
    h('div', { class: 'row' }, h('h2', { id: 'faq-h' }, 'FAQ'), h('span', { class: 'spacer' }),
      h('button', { type: 'button', class: 'primary', id: 'faq-add', onclick: () => editFAQ(null) }, 'Add question')),
    f.form, el.faqEmpty, el.faqList);
}

function editFAQ(e) {
  const f = el.faq;
  f.form.dataset.id = e ? e.id : '';
  f.question.value = e ? e.question : '';
  f.answer.value = e ? e.answer : '';
  openEditor(f, e ? 'Edit the question' : 'Add a question', f.question);
}

async function saveFAQ(ev) {
  ev.preventDefault();
  const f = el.faq;
  if (!f.question.value.trim()) { fail(f.err, 'Write the question.'); f.question.focus(); return; }
  if (!f.answer.value.trim()) { fail(f.err, 'Write the answer.'); f.answer.focus(); return; }
  const id = f.form.dataset.id;
  const body = { question: f.question.value.trim(), answer: f.answer.value.trim() };
  if (!id) body.display_order = nextOrder(C.faq);
  const r = await save(id ? 'PUT' : 'POST', `/api/admin/content/faq${id ? `/${id}` : ''}`, body, f.err, id ? 'Question saved.' : 'Question added.');
  if (r) { closeEditor(f); load(); }
}

function renderFAQ() {
  const sorted = [...C.faq].sort(byOrder);
  el.faqEmpty.hidden = sorted.length > 0;
  el.faqList.replaceChildren(...sorted.map((e, i) => h('li', { dataset: { id: e.id } },
    h('span', { class: 'rank-no' }, `${i + 1}.`),
    h('div', { class: 'grow' }, h('strong', {}, e.question), h('p', { class: 'hint clamp' }, e.answer)),
    h('div', { class: 'row actions' },
      ...moveButtons('faq', sorted, i, `“${e.question}”`),
      small('Edit', () => editFAQ(e), `Edit “${e.question}”`),
      small('Delete', () => remove('faq', e.id, 'this question'), `Delete “${e.question}”`, true)))));
}

// ---------- import / export ----------

const strip = ({ id, created_at: c, updated_at: u, ...rest }) => rest; // eslint-disable-line no-unused-vars

async function exportDoc() {
  await load();
  const doc = { schedule: C.schedule.map(strip), sponsors: C.sponsors.map(strip), faq: C.faq.map(strip) };
  const blob = new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: 'application/json' });
  const a = el.exportLink;
  if (a.href) URL.revokeObjectURL(a.href);
  const name = `podium-content-${new Date().toISOString().slice(0, 10)}.json`;
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.blob = blob; // for tests and for a second download
  a.textContent = `Download ${name}`;
  a.hidden = false;
  a.click();
  toast(`Exported ${doc.schedule.length} schedule entries, ${doc.sponsors.length} sponsors, ${doc.faq.length} questions.`);
}

async function importDoc() {
  const err = el.importErr;
  err.hidden = true;
  const file = el.importFile.files[0];
  if (!file) return;
  let doc;
  try {
    doc = JSON.parse(await file.text());
  } catch {
    fail(err, `“${file.name}” is not a JSON file.`);
    el.importFile.value = '';
    return;
  }
  const missing = KINDS.filter((k) => !doc || !Array.isArray(doc[k]));
  if (missing.length) {
    fail(err, `“${file.name}” is not a content document: it needs the arrays ${missing.join(', ')} ({schedule, sponsors, faq}).`);
    el.importFile.value = '';
    return;
  }
  const count = (o) => `${o.schedule.length} schedule entries, ${o.sponsors.length} sponsors and ${o.faq.length} questions`;
  const ok = await dialog('Replace all site content?', [
    h('p', {}, `Now: ${count(C)}.`),
    h('p', {}, `From “${file.name}”: ${count(doc)}.`),
    h('p', { class: 'muted' }, 'Everything is replaced at once; if anything in the file is invalid, nothing changes. Export first to keep a copy.'),
  ], { okText: 'Replace content', danger: true });
  el.importFile.value = '';
  if (!ok) return;
  if (await save('PUT', '/api/admin/content', { schedule: doc.schedule, sponsors: doc.sponsors, faq: doc.faq }, err, 'Content imported.')) load();
}

// ---------- render ----------

function render() {
  renderSchedule();
  renderSponsors();
  renderFAQ();
}

build();
