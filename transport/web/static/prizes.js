// Settings → Prizes (docs/behaviour.md#after-judging, SPEC §5c): the organiser lists the
// event's prizes (an overall prize with N places, or a prize for one track with the track
// chosen from the tracks in Settings; 1–10 places) and saves the whole list with PUT
// /api/admin/prizes. Nothing is saved until "Save prizes"; the server's refusal is shown
// in plain words next to the list. The Winners tab (winners.js) reads the same list.
import { api, h, $, toast } from './lib.js';
import { dialog, onSocket, whenShown } from './dialog.js';

const MAX_PLACES = 10;
const P = { saved: [], rows: [], tracks: [], dirty: false, seq: 0 };
const root = $('#prizes-root');

const norm = (list) => list.map((p) => ({ id: p.id || undefined, name: p.name.trim(), track: p.track || '', places: Number(p.places) }));
const same = (a, b) => JSON.stringify(norm(a)) === JSON.stringify(norm(b));

function fail(msg) {
  const e = $('#pz-error');
  e.textContent = msg;
  e.hidden = !msg;
}

// check returns what is wrong with the list in words, or ''.
function check(rows) {
  const seen = new Set();
  for (let i = 0; i < rows.length; i++) {
    const p = rows[i];
    const which = p.name.trim() ? `“${p.name.trim()}”` : `Prize ${i + 1}`;
    if (!p.name.trim()) return `${which} needs a name.`;
    const key = p.name.trim().toLowerCase();
    if (seen.has(key)) return `Two prizes are called ${which}: give each prize its own name.`;
    seen.add(key);
    if (!Number.isInteger(Number(p.places)) || p.places < 1 || p.places > MAX_PLACES) return `${which}: places must be a whole number from 1 to ${MAX_PLACES}.`;
    if (p.kind === 'track' && !p.track) return `${which} is a track prize: choose its track.`;
    if (p.track && !P.tracks.includes(p.track)) return `${which} is for the track “${p.track}”, which is no longer in Settings → Tracks. Choose another track or make it an overall prize.`;
  }
  return '';
}

function markDirty() {
  P.dirty = !same(P.rows, P.saved) || P.rows.length !== P.saved.length;
  $('#pz-save').disabled = !P.dirty;
  $('#pz-state').textContent = P.dirty ? 'Unsaved changes.' : '';
}

function row(p, i) {
  const id = `pz-${p.key}`;
  const name = h('input', {
    type: 'text', id: `${id}-name`, maxlength: '120', value: p.name, placeholder: 'e.g. Best overall',
    oninput: (ev) => { p.name = ev.target.value; markDirty(); },
  });
  const kind = h('select', {
    id: `${id}-kind`,
    onchange: (ev) => {
      p.kind = ev.target.value;
      if (p.kind === 'overall') p.track = '';
      else if (!p.track && P.tracks.length) p.track = P.tracks[0];
      render();
      markDirty();
    },
  }, h('option', { value: 'overall' }, 'Overall'), h('option', { value: 'track', disabled: !P.tracks.length && p.kind !== 'track' }, 'One track'));
  kind.value = p.kind;
  const trackOpts = [...P.tracks];
  if (p.track && !trackOpts.includes(p.track)) trackOpts.push(p.track); // shown, and refused by check()
  const track = h('select', {
    id: `${id}-track`, disabled: p.kind !== 'track',
    onchange: (ev) => { p.track = ev.target.value; markDirty(); },
  }, p.kind === 'track' ? trackOpts.map((t) => h('option', { value: t }, P.tracks.includes(t) ? t : `${t} (not a track any more)`)) : h('option', { value: '' }, '–'));
  track.value = p.kind === 'track' ? p.track : '';
  const places = h('input', {
    type: 'number', id: `${id}-places`, min: '1', max: String(MAX_PLACES), step: '1', value: String(p.places), inputmode: 'numeric',
    oninput: (ev) => { p.places = ev.target.value === '' ? '' : Number(ev.target.value); markDirty(); },
  });
  const move = (d) => {
    const j = i + d;
    [P.rows[i], P.rows[j]] = [P.rows[j], P.rows[i]];
    render();
    markDirty();
  };
  const label = p.name.trim() || `prize ${i + 1}`;
  return h('li', { class: 'prize-row', dataset: { key: String(p.key) } },
    h('div', { class: 'pz-name' }, h('label', { for: `${id}-name` }, 'Prize name'), name),
    h('div', { class: 'pz-kind' }, h('label', { for: `${id}-kind` }, 'For'), kind),
    h('div', { class: 'pz-track' }, h('label', { for: `${id}-track` }, 'Track'), track),
    h('div', { class: 'pz-places' }, h('label', { for: `${id}-places` }, 'Places'), places),
    h('div', { class: 'pz-actions row' },
      h('button', { type: 'button', class: 'small', 'aria-label': `Move ${label} up`, disabled: i === 0, onclick: () => move(-1) }, '↑'),
      h('button', { type: 'button', class: 'small', 'aria-label': `Move ${label} down`, disabled: i === P.rows.length - 1, onclick: () => move(1) }, '↓'),
      h('button', {
        type: 'button', class: 'small danger', 'aria-label': `Remove ${label}`,
        onclick: async () => {
          if (p.id && !(await dialog(`Remove “${label}”?`, h('p', {}, 'The prize leaves the list when you save. If winners were published for it, publish again to update the screens.'), { okText: 'Remove', danger: true }))) return;
          P.rows.splice(P.rows.indexOf(p), 1);
          render();
          markDirty();
        },
      }, 'Remove')));
}

function newRow(over) {
  P.seq += 1;
  return { key: P.seq, id: undefined, name: '', kind: 'overall', track: '', places: 3, ...over };
}

function render() {
  const list = $('#pz-list');
  const focus = document.activeElement && list.contains(document.activeElement) ? document.activeElement.id : '';
  list.replaceChildren(...P.rows.map(row));
  $('#pz-empty').hidden = P.rows.length > 0;
  $('#pz-per-track').hidden = !P.tracks.length;
  if (focus && document.getElementById(focus)) document.getElementById(focus).focus();
}

function fromServer(list) {
  P.saved = (list || []).map((p) => ({ id: p.id, name: p.name, track: p.track || '', places: p.places }));
  P.rows = P.saved.map((p) => newRow({ ...p, kind: p.track ? 'track' : 'overall' }));
  render();
  markDirty();
}

async function load() {
  let prizes, opts;
  try {
    [prizes, opts] = await Promise.all([api('GET', '/api/admin/prizes'), api('GET', '/api/admin/options')]);
  } catch (e) {
    if (e.status === 404) fail('This server does not know prizes yet (update Podium).');
    return;
  }
  P.tracks = (opts && opts.tracks) || [];
  if (!P.dirty) fromServer(Array.isArray(prizes) ? prizes : []);
  else render();
}

function build() {
  root.replaceChildren(
    h('div', { class: 'card-head' }, h('h2', { id: 'pz-h' }, 'Prizes'), h('span', { id: 'pz-state', class: 'hint', 'aria-live': 'polite' })),
    h('p', { class: 'hint' }, 'The prizes you will announce. An overall prize is decided by every judge\'s rankings; a track prize by that track\'s own judges. '
      + 'Podium proposes the winners of each in Results → Winners, where you confirm and publish them.'),
    h('ol', { id: 'pz-list', class: 'prize-list' }),
    h('p', { id: 'pz-empty', class: 'muted' }, 'No prizes yet. Add the overall prize first, then one for each sponsor track.'),
    h('p', { id: 'pz-error', class: 'banner bad', role: 'alert', hidden: true }),
    h('div', { class: 'row mt' },
      h('button', { type: 'button', id: 'pz-add', onclick: () => { P.rows.push(newRow({ name: P.rows.length ? '' : 'Best overall' })); render(); markDirty(); $(`#pz-${P.seq}-name`).focus(); } }, 'Add a prize'),
      h('button', {
        type: 'button', id: 'pz-per-track', hidden: true,
        onclick: () => {
          const have = new Set(P.rows.filter((p) => p.kind === 'track').map((p) => p.track));
          const add = P.tracks.filter((t) => !have.has(t));
          if (!add.length) { toast('Every track already has a prize.'); return; }
          for (const t of add) P.rows.push(newRow({ name: `Best ${t}`, kind: 'track', track: t, places: 1 }));
          render();
          markDirty();
        },
      }, 'Add one prize per track'),
      h('span', { class: 'spacer' }),
      h('button', { type: 'button', id: 'pz-undo', onclick: () => { P.dirty = false; fail(''); load(); } }, 'Undo changes'),
      h('button', { type: 'button', id: 'pz-save', class: 'primary', disabled: true, onclick: save }, 'Save prizes')),
  );
}

async function save() {
  fail('');
  const bad = check(P.rows);
  if (bad) { fail(bad); return; }
  const body = P.rows.map((p) => {
    const o = { name: p.name.trim(), track: p.kind === 'track' ? p.track : '', places: Number(p.places) };
    if (p.id) o.id = p.id;
    return o;
  });
  try {
    await api('PUT', '/api/admin/prizes', body);
  } catch (e) {
    if (e.status === 401) { location.reload(); return; }
    fail(e.status === 400 ? `Not saved: ${e.message}` : `Not saved: ${e.message} Try again.`);
    return;
  }
  P.dirty = false;
  toast('Prizes saved.');
  window.dispatchEvent(new CustomEvent('podium:prizes')); // winners.js reloads
  load();
}

build();
onSocket((type, d) => {
  if (type === 'resync' || (type === 'changed' && ['prizes', 'options'].includes(d.kind))) load();
});
// The dashboard's socket says "resync" once logged in and after every reconnect.
whenShown($('#panel-settings'), () => { if (!P.dirty) load(); });
