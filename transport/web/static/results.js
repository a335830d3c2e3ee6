// Results tab of the admin dashboard (docs/behaviour.md#ratings): the ranking by rating with its
// uncertainty, per-track winners, how settled the top is, and the judges by reliability
// with a one-click hide. It refetches when the websocket says judging data changed.
import { api, h, $, LiveSocket, throttle, toast } from '/static/lib.js';

const pct = (p) => `${Math.round(p * 100)}%`;

// intervalPlot draws rating ± sd on a common scale [lo, hi] (SVG: the page's CSP
// allows no inline styles).
function intervalPlot(r, lo, hi) {
  const span = hi - lo || 1;
  const x = (v) => (((v - lo) / span) * 160).toFixed(1);
  return h('svg:svg', { class: 'ci', width: 160, height: 12, viewBox: '0 0 160 12', role: 'img',
    'aria-label': `${r.rating.toFixed(2)} ± ${r.rating_sd.toFixed(2)}` },
  h('svg:rect', { x: 0, y: 5, width: 160, height: 2, fill: '#ddd' }),
  h('svg:rect', { x: x(r.rating - r.rating_sd), y: 3, width: (x(r.rating + r.rating_sd) - x(r.rating - r.rating_sd)).toFixed(1), height: 6, fill: '#89a' }),
  h('svg:rect', { x: x(r.rating) - 1, y: 0, width: 2, height: 12, fill: '#123' }));
}

async function loadResults() {
  let res;
  try {
    res = await api('GET', '/api/admin/results');
  } catch {
    return;
  }
  const ps = res.projects || [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of ps) {
    lo = Math.min(lo, p.rating - p.rating_sd);
    hi = Math.max(hi, p.rating + p.rating_sd);
  }
  const body = $('#results-table tbody');
  body.replaceChildren(...ps.map((p) => h('tr', { 'data-id': p.id },
    h('td', {}, String(p.rank)), h('td', {}, p.name), h('td', {}, String(p.location)),
    h('td', {}, intervalPlot(p, lo, hi), ` ${p.rating.toFixed(2)} ± ${p.rating_sd.toFixed(2)}`),
    h('td', {}, pct(p.p_top)), h('td', {}, String(p.score)), h('td', {}, String(p.stars)),
    h('td', {}, String(p.seen)))));
  $('#results-settled').textContent = ps.length
    ? `top 3 stable: ${pct(res.stable_top3)} · top ${res.focus_top} stable: ${pct(res.stable_top)}`
    : 'no results yet';
  const tracks = $('#results-tracks');
  tracks.replaceChildren(...Object.entries(res.tracks || {}).map(([t, list]) => h('div', {},
    h('h3', {}, `Track: ${t}`),
    h('ol', {}, ...list.slice(0, 5).map((p) => h('li', {}, `${p.name} (table ${p.location}) — ${p.track_stars || 0} stars, rank ${p.rank}`))))));
}

async function loadJudges() {
  let js;
  try {
    js = await api('GET', '/api/judge/list');
  } catch {
    return;
  }
  js.sort((a, b) => (a.reliability ?? 1) - (b.reliability ?? 1));
  const body = $('#results-judges tbody');
  body.replaceChildren(...js.map((j) => h('tr', { 'data-id': j.id },
    h('td', {}, j.name), h('td', {}, (j.reliability ?? 1).toFixed(2)), h('td', {}, String(j.seen)),
    h('td', {}, h('button', { type: 'button', class: 'hide-judge', onclick: async () => {
      try {
        await api('PUT', `/api/judge/hide/${j.id}`, { hide: j.active });
        toast(j.active ? `${j.name} hidden` : `${j.name} shown`);
        loadJudges();
      } catch (e) { toast(e.message, true); }
    } }, j.active ? 'Hide' : 'Unhide')))));
}

const refresh = throttle(() => { loadResults(); loadJudges(); }, 1000);

// The socket opens when the tab is first shown: by then the admin is logged in, so the
// server knows it as an admin (admin events only go to admins).
let socket = null;
$('#tab-results').addEventListener('click', () => {
  if (!socket) {
    socket = new LiveSocket((type, d) => {
      if (type === 'hello' || type === 'stats' || (type === 'changed' && ['ratings', 'judge', 'project'].includes(d.kind))) refresh();
    });
  }
  refresh();
});
