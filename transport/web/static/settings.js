// The dashboard's Settings tab and QR & data tab (docs/behaviour.md#options-clock-and-deliberation,
// docs/behaviour.md#groups-and-tracks, docs/behaviour.md#qr-self-signup): the options form
// (only changed settings are sent), the event name in the header and title, moving
// judges to the next group and balancing project groups, the judges' sign-up QR codes
// (general and per track) and the backup button.
import { api, h, $, toast } from './lib.js';
import { A, quiet, run, confirmDanger } from './admin-state.js';
import { renderAverages, setDeliberation } from './overview.js';
import { renderCoverage } from './activity.js';
import { judgeTable, loadJudges } from './judges.js';
import { projectTable, loadProjects } from './projects.js';

// ---------- options ----------

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const nums = (s) => list(s).map(Number);

// setEventName puts the event's name in the header and the page title.
export function setEventName(name) {
  $('#event-name').textContent = name;
  document.title = `Admin · ${name}`;
}

export async function loadOptions() {
  const o = await quiet(api('GET', '/api/admin/options'));
  if (!o) return;
  A.options = o;
  A.groupInfo = { names: o.group_names || [], enabled: !!o.multi_group, event_name: o.event_name };
  setEventName(o.event_name || 'Podium');
  setDeliberation(!!o.deliberation);
  fillOptions(o);
  const sel = $('#ja-track');
  const cur = sel.value;
  sel.replaceChildren(h('option', { value: '' }, 'General judge'), ...(o.tracks || []).map((t) => h('option', { value: t }, t)));
  sel.value = (o.tracks || []).includes(cur) ? cur : '';
  judgeTable.render();
  projectTable.render();
  renderCoverage();
  renderAverages(); // judge_tracks decides who is a general judge
}

function fillOptions(o) {
  const f = $('#options-form');
  if (f.contains(document.activeElement) && f.dataset.dirty === '1') return; // don't clobber edits
  $('#o-event_name').value = o.event_name || '';
  $('#o-judging_timer').value = o.judging_timer;
  $('#o-min_views').value = o.min_views;
  $('#o-clock_sync').checked = !!o.clock_sync;
  $('#o-judge_tracks').checked = !!o.judge_tracks;
  $('#o-tracks').value = (o.tracks || []).join(', ');
  $('#o-track_views').value = (o.track_views || []).join(', ');
  $('#o-ignore_tracks').value = (o.ignore_tracks || []).join(', ');
  $('#o-multi_group').checked = !!o.multi_group;
  $('#o-num_groups').value = o.num_groups;
  $('#o-group_sizes').value = (o.group_sizes || []).join(', ');
  $('#o-group_names').value = (o.group_names || []).join('\n');
  $('#o-switching_mode').value = o.switching_mode || 'auto';
  $('#o-auto_switch_prop').value = o.auto_switch_prop;
  $('#o-max_req_per_min').value = o.max_req_per_min;
  $('#o-block_reqs').checked = !!o.block_reqs;
  $('#options-ref').textContent = `Settings revision ${o.ref}: it goes up by one each time anyone saves a change, so a higher number than you saw means someone else changed them.`;
  f.dataset.dirty = '';
}

$('#options-form').addEventListener('input', () => { $('#options-form').dataset.dirty = '1'; });

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

$('#options-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const err = $('#options-error');
  err.hidden = true;
  const o = A.options || {};
  const want = {
    event_name: $('#o-event_name').value.trim(),
    judging_timer: Number($('#o-judging_timer').value),
    min_views: Number($('#o-min_views').value),
    clock_sync: $('#o-clock_sync').checked,
    judge_tracks: $('#o-judge_tracks').checked,
    tracks: list($('#o-tracks').value),
    ignore_tracks: list($('#o-ignore_tracks').value),
    multi_group: $('#o-multi_group').checked,
    num_groups: Number($('#o-num_groups').value),
    group_sizes: nums($('#o-group_sizes').value),
    group_names: $('#o-group_names').value.split('\n').map((x) => x.trim()).filter(Boolean),
    switching_mode: $('#o-switching_mode').value,
    auto_switch_prop: Number($('#o-auto_switch_prop').value),
    max_req_per_min: Number($('#o-max_req_per_min').value),
    block_reqs: $('#o-block_reqs').checked,
  };
  const body = {};
  for (const [k, v] of Object.entries(want)) if (!same(v, o[k])) body[k] = v;
  const trackViews = nums($('#o-track_views').value);
  try {
    if (Object.keys(body).length) await api('POST', '/api/admin/options', body);
    if (!same(trackViews, o.track_views || [])) await api('POST', '/api/admin/track-views', { track_views: trackViews });
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
    return;
  }
  $('#options-form').dataset.dirty = '';
  toast('Settings saved.');
  loadOptions();
});

$('#groups-swap').addEventListener('click', async () => {
  if (await confirmDanger('Move every judge to the next group?', 'Every active general judge moves to the next group now.', 'Move judges')) {
    if (await run(api('POST', '/api/admin/groups/swap'), 'Judges moved.')) loadJudges();
  }
});
$('#groups-balance').addEventListener('click', async () => {
  if (await run(api('POST', '/api/project/balance-groups'), 'Project groups balanced.')) { loadOptions(); loadProjects(); }
});

// ---------- QR codes, backup ----------

export async function loadQR() {
  const tracks = (A.options && A.options.tracks) || [];
  const entries = [{ track: '', title: 'General judges' }, ...tracks.map((t) => ({ track: t, title: `Track: ${t}` }))];
  const cards = await Promise.all(entries.map(async (e) => {
    const path = e.track ? `/api/admin/qr/${encodeURIComponent(e.track)}` : '/api/admin/qr';
    const r = await quiet(api('GET', path));
    const code = r && r.qr_code ? r.qr_code : '';
    const link = code ? `${location.origin}/join?code=${encodeURIComponent(code)}${e.track ? `&track=${encodeURIComponent(e.track)}` : ''}` : '';
    const make = h('button', {
      type: 'button', class: 'small',
      onclick: async () => {
        if (code && !(await confirmDanger('Make a new QR code?', 'The current code stops working for new sign-ups.', 'New code'))) return;
        if (await run(api('POST', path), 'New QR code made.')) loadQR();
      },
    }, code ? 'Make a new code' : 'Make a QR code');
    return h('div', { class: 'card' }, h('h3', {}, e.title),
      code ? h('img', { src: `${path}.png?v=${encodeURIComponent(code.slice(0, 8))}`, alt: `QR code to join as a judge (${e.title})`, width: '240', height: '240' }) : h('p', { class: 'muted' }, 'No QR code yet.'),
      code ? h('p', { class: 'code hint' }, link) : null,
      make);
  }));
  $('#qr-list').replaceChildren(...cards);
}

$('#backup').addEventListener('click', async () => {
  const r = await run(api('POST', '/api/admin/backup'));
  if (r && r.backup) {
    $('#backup-result').replaceChildren('Backup written: ', h('a', { href: `/api/admin/backup/${encodeURIComponent(r.backup)}`, download: r.backup }, r.backup));
    toast('Backup written.');
  }
});
