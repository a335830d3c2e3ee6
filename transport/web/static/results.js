// Results tab of the admin dashboard (docs/behaviour.md#ratings, #dashboard-and-expo): the
// ranking by rating with its uncertainty and what each figure means, how settled the top
// is and when judging can stop, a warning when the order rests on stars alone, per-track
// winners, and the judges by reliability with the evidence and a one-click hide. It
// refetches when the websocket says judging data changed.
import { api, h, $, LiveSocket, throttle, toast } from '/static/lib.js';
import { dialog } from '/static/dialog.js';

const pct = (p) => `${Math.round(p * 100)} %`;
const fixed = (v) => (Number.isFinite(v) ? v.toFixed(2) : '–');
// A judge below this reliability is marked "check" (docs/behaviour.md#dashboard-and-expo).
const CHECK_BELOW = 0.7;
// "Stable" at or above this: more judging would rarely change who is named.
const SETTLED = 0.9;

const R = { results: null, judges: [], judgeTracks: false };

// inFit says whether the judge's views enter the ratings (docs/behaviour.md#the-fit): an
// active general judge with two or more views. The list shows 1 for the others.
const isGeneral = (j) => !j.track || !R.judgeTracks;
const inFit = (j) => j.active && isGeneral(j) && (j.seen_projects || []).length >= 2;

// intervalPlot draws rating ± sd on a common scale [lo, hi] (SVG: the page's CSP
// allows no inline styles).
function intervalPlot(r, lo, hi) {
  const span = hi - lo || 1;
  const x = (v) => (((v - lo) / span) * 120).toFixed(1);
  return h('svg:svg', { class: 'ci', width: 120, height: 12, viewBox: '0 0 120 12', 'aria-hidden': 'true' },
    h('svg:rect', { x: 0, y: 5, width: 120, height: 2, fill: '#ddd' }),
    h('svg:rect', { x: x(r.rating - r.rating_sd), y: 3, width: (x(r.rating + r.rating_sd) - x(r.rating - r.rating_sd)).toFixed(1), height: 6, fill: '#89a' }),
    h('svg:rect', { x: x(r.rating) - 1, y: 0, width: 2, height: 12, fill: '#123' }));
}

// cell is a table cell; label names it where the table is stacked (narrow screens).
const cell = (cls, label, ...children) => h('td', { class: cls || undefined, 'data-label': label }, ...children);
const nameBox = (name) => h('div', { class: 'name-box' }, name);

// rankingRow: Rank follows the Rating column, which decides (docs/behaviour.md#results-the-deciding-column);
// Jury's Copeland score is in the project's details, not beside the rank it would contradict.
function rankingRow(p, lo, hi, n) {
  return h('tr', { 'data-id': p.id },
    cell('num rank', 'Rank', String(p.rank)),
    cell('name', 'Project', nameBox(p.name)),
    cell('num', 'Table', String(p.location)),
    cell('rating decides', 'Rating ± sd', intervalPlot(p, lo, hi), h('span', { class: 'nowrap' }, `${fixed(p.rating)} ± ${fixed(p.rating_sd)}`)),
    cell('num', `P(top ${n})`, pct(p.p_top)), cell('num', 'Stars', String(p.stars)),
    cell('num', 'Views', String(p.seen)),
    cell('', 'Details', h('button', { type: 'button', class: 'small details', onclick: () => details(p, n), 'aria-label': `Details of ${p.name}` }, 'Details')));
}

// details shows one project's figures, Jury's Copeland score among them with what it is.
function details(p, n) {
  const row = (k, v, note) => [h('dt', {}, k), h('dd', {}, v, note ? h('span', { class: 'hint' }, ' ', note) : '')];
  return dialog(`${p.name} · table ${p.location}`, h('dl', { class: 'legend details-list' },
    ...row('Rank', String(p.rank), '(by rating: this decides the order and the prizes)'),
    ...row('Rating ± sd', `${fixed(p.rating)} ± ${fixed(p.rating_sd)}`),
    ...row(`P(top ${n})`, pct(p.p_top)),
    ...row('Stars', String(p.stars), '(general judges)'),
    ...row('Views', String(p.seen)),
    ...row("Jury's Copeland score", String(p.score),
      "(pairwise wins in the judges' rankings, as Jury counts them: for comparison with Jury only; it does not decide the rank, and a project seen by more judges wins more pairs)")),
  { okText: 'Close', cancel: false });
}

function renderRanking(res) {
  const ps = res.projects || [];
  const n = res.focus_top || 10;
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of ps) {
    lo = Math.min(lo, p.rating - p.rating_sd);
    hi = Math.max(hi, p.rating + p.rating_sd);
  }
  $('#results-ptop-h').textContent = `P(top ${n})`;
  $('#results-ptop-dt').textContent = `P(top ${n})`;
  $('#results-ptop-dd').textContent = `The chance that the project belongs in the top ${n} (the top that judging focuses on), not the chance of winning: `
    + `${n} places are shared out, so the column adds up to ${n * 100} %, not 100 %.`;
  $('#results-table tbody').replaceChildren(...ps.map((p) => rankingRow(p, lo, hi, n)));
  const settled = $('#results-settled');
  const help = $('#results-settled-help');
  if (!ps.length) {
    settled.textContent = 'No active projects yet.';
    help.textContent = '';
    return;
  }
  const k = Math.min(n, ps.length);
  settled.replaceChildren(
    h('span', { class: res.stable_top3 >= SETTLED ? 'pill ok-state' : 'pill' }, `Top 3 stable: ${pct(res.stable_top3)}`), ' ',
    h('span', { class: res.stable_top >= SETTLED ? 'pill ok-state' : 'pill' }, `Top ${k} stable: ${pct(res.stable_top)}`));
  help.textContent = `"Stable" is the chance, given every ranking so far, that the projects named now are exactly the true top 3 (top ${k}), in any order. `
    + `At ${pct(SETTLED)} or more, more judging would rarely change who is named and judging can stop; `
    + 'below that, the projects near the cut need more views (focus assignment sends judges to them).';
}

// renderWarning says plainly when the order does not rest on judges' rankings.
function renderWarning(res) {
  const w = $('#results-warning');
  const ps = res.projects || [];
  const views = ps.reduce((s, p) => s + p.seen, 0);
  const fitted = R.judges.filter(inFit);
  const ranked = fitted.filter((j) => (j.rankings || []).length >= 2);
  let text = '';
  if (ps.length && views === 0) {
    text = 'No project has been judged yet: the order below is by table number, not by merit.';
  } else if (ps.length && ranked.length === 0) {
    text = 'No judge has ranked the projects they saw (or the rankings were reset): the ratings come from stars alone, '
      + 'so the order below is a rough guess, not a ranking anyone gave. Ask judges to rank before naming winners.';
  } else if (ranked.length < fitted.length / 2) {
    text = `Only ${ranked.length} of ${fitted.length} judges with two or more views have ranked them: `
      + 'the ratings lean on stars, so the order below is provisional.';
  }
  w.textContent = text;
  w.hidden = !text;
}

function renderTracks(res) {
  const general = new Map((res.projects || []).map((p) => [p.id, p.stars]));
  $('#results-tracks').replaceChildren(...Object.entries(res.tracks || {}).map(([t, list]) => h('div', { class: 'card' },
    h('h3', {}, `Track: ${t}`),
    list.length ? h('div', { class: 'table-wrap fit' }, h('table', { class: 'data compact track-results' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Project'), h('th', { scope: 'col', class: 'num' }, 'Table'),
        h('th', { scope: 'col', class: 'num', title: `Stars from ${t} judges` }, 'Track stars'),
        h('th', { scope: 'col', class: 'num', title: 'Stars from general judges, as in the ranking' }, 'Stars'),
        h('th', { scope: 'col', class: 'num' }, 'Rank'))),
      h('tbody', {}, ...list.slice(0, 10).map((p) => h('tr', { 'data-id': p.id },
        cell('name', 'Project', nameBox(p.name)), cell('num', 'Table', String(p.location)),
        cell('num', 'Track stars', String(p.track_stars || 0)),
        cell('num', 'Stars', String(general.get(p.id) ?? p.stars)), cell('num', 'Rank', String(p.rank)))))))
      : h('p', { class: 'muted' }, 'No active project lists this track.'),
    h('p', { class: 'hint' }, `By stars from ${t} judges, then rating. "Stars" is the same count as in the ranking (general judges).`,
      list.length > 10 ? ` ${list.length - 10} more not shown.` : ''))));
}

// disagreement shows how often a judge went against the others: of its clear-cut pairs
// (compared: pairs the consensus of the other judges is sure of), how many it ordered
// the other way (docs/behaviour.md#judges-against-the-consensus); "–" before it had any.
function disagreement(j) {
  if (j.disagreement == null || !j.compared) return h('span', { title: 'No pair in its ranking that the other judges are sure of yet' }, '–');
  const against = Math.round(Number(j.disagreement) * j.compared);
  return h('span', { class: 'nowrap', title: `Ordered ${against} of the ${j.compared} pairs the other judges are sure of the other way round; a judge answering at random does so for about half.` },
    `${against} of ${j.compared} (${pct(Number(j.disagreement))})`);
}

function judgeRow(j, withDisagreement) {
  const fitted = inFit(j) && typeof j.reliability === 'number';
  const check = fitted && j.reliability < CHECK_BELOW;
  let rel = fixed(j.reliability);
  if (!isGeneral(j)) rel = 'track judge';
  else if (!fitted && j.active) rel = 'not rated yet';
  return h('tr', { 'data-id': j.id, class: j.active ? undefined : 'inactive' },
    cell('name', 'Judge', nameBox(j.name), j.active ? '' : h('span', { class: 'pill hidden-state' }, 'hidden')),
    cell('num', 'Reliability', rel, check ? h('span', { class: 'pill hidden-state' }, 'check') : ''),
    withDisagreement ? cell('num', 'Disagreed', disagreement(j)) : null,
    cell('num', 'Views', String(j.seen)), cell('num', 'Ranked', String((j.rankings || []).length)),
    cell('', 'Action', h('button', { type: 'button', class: 'hide-judge small', onclick: () => toggleJudge(j) }, j.active ? 'Hide' : 'Unhide')));
}

// toggleJudge hides (after asking: it also stops the judge's assignments) or shows a judge.
async function toggleJudge(j) {
  if (j.active) {
    const ok = await dialog(`Hide ${j.name}?`, [
      h('p', {}, `${j.name} stops getting projects: their current one is released, and their phone says they are paused.`),
      h('p', {}, `Their rankings and stars leave every score and the ratings until you unhide ${j.name}; nothing is deleted.`)],
    { okText: 'Hide judge', danger: true });
    if (!ok) return;
  }
  try {
    await api('PUT', `/api/judge/hide/${j.id}`, { hide: j.active });
    toast(j.active ? `${j.name} hidden: no more projects, rankings left out` : `${j.name} shown again`);
    refresh();
  } catch (e) { toast(e.message, true); }
}

function renderJudges() {
  // Fitted judges by reliability, lowest first; then the ones not rated yet.
  const key = (j) => (inFit(j) && typeof j.reliability === 'number' ? j.reliability : Infinity);
  const js = [...R.judges].sort((a, b) => key(a) - key(b) || a.name.localeCompare(b.name));
  const withD = js.some((j) => j.disagreement != null);
  $('#results-disagree-h').hidden = !withD;
  $('#results-judges tbody').replaceChildren(...js.map((j) => judgeRow(j, withD)));
}

async function load() {
  let res;
  let js;
  let opts;
  try {
    [res, js, opts] = await Promise.all([api('GET', '/api/admin/results'), api('GET', '/api/judge/list'), api('GET', '/api/admin/options')]);
  } catch {
    return;
  }
  R.results = res;
  R.judgeTracks = !!opts.judge_tracks;
  R.judges = Array.isArray(js) ? js : [];
  renderRanking(res);
  renderWarning(res);
  renderTracks(res);
  renderJudges();
}

const refresh = throttle(load, 1000);

// The socket opens when the tab is first shown: by then the admin is logged in, so the
// server knows it as an admin (admin events only go to admins).
let socket = null;
$('#tab-results').addEventListener('click', () => {
  if (!socket) {
    socket = new LiveSocket((type, d) => {
      if (type === 'hello' || type === 'stats' || (type === 'changed' && ['ratings', 'judge', 'project', 'options'].includes(d.kind))) refresh();
    });
  }
  refresh();
});
