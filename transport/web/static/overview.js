// The dashboard's Overview figures and the judging clock (docs/behaviour.md#dashboard-and-expo,
// docs/behaviour.md#options-clock-and-deliberation): the stats and the averages computed from
// the lists, the clock with its Start/Pause/Reset buttons, the pause banner shown on
// every tab, and deliberation on and off. admin.js feeds it the socket's clock,
// deliberation and stats messages.
import { api, $, fmtClock } from './lib.js';
import { A, quiet, run, confirmDanger } from './admin-state.js';

// ---------- stats, clock, deliberation ----------

export async function loadStats() {
  const s = await quiet(api('GET', '/api/admin/stats'));
  if (s) renderStats(s);
}

export function renderStats(s) {
  A.stats = s;
  $('#stat-projects').textContent = s.projects ?? '–';
  $('#stat-judges').textContent = s.judges ?? '–';
  renderAverages();
}

// renderAverages shows the average views to two decimals (the stats route rounds them
// to whole numbers, as Jury's types do), from the lists: active projects' views and
// active general judges' views.
export function renderAverages() {
  renderJudgeCount();
  const avg = (xs) => (xs.length ? (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2) : '–');
  $('#stat-avg-project').textContent = avg(A.projects.filter((p) => p.active).map((p) => p.seen));
  const general = (j) => !j.track || !(A.options && A.options.judge_tracks);
  $('#stat-avg-judge').textContent = avg(A.judges.filter((j) => j.active && general(j)).map((j) => j.seen));
}

// renderJudgeCount says what "Active general judges" leaves out (the stats route counts
// active general judges only): track judges and hidden judges, out of all judges.
function renderJudgeCount() {
  if (!A.judges.length) { $('#stat-judges-note').textContent = ''; return; }
  const tracks = !!(A.options && A.options.judge_tracks);
  const track = A.judges.filter((j) => j.active && j.track && tracks).length;
  const hidden = A.judges.filter((j) => !j.active).length;
  const parts = [];
  if (track) parts.push(`${track} track judge${track === 1 ? '' : 's'}`);
  if (hidden) parts.push(`${hidden} hidden`);
  $('#stat-judges-note').textContent = `of ${A.judges.length} judge${A.judges.length === 1 ? '' : 's'}` + (parts.length ? ` (not counted: ${parts.join(', ')})` : '');
}

export async function loadClock() {
  const c = await quiet(api('GET', '/api/admin/clock'));
  if (c) setClock(c);
}

export function setClock(c) {
  A.clock = { running: !!c.running, time: Number(c.time) || 0 };
  A.clockAt = Date.now();
  renderClock();
}

export function renderClock() {
  const t = A.clock.time + (A.clock.running ? Date.now() - A.clockAt : 0);
  $('#clock').textContent = fmtClock(t);
  const st = $('#clock-state');
  st.textContent = A.clock.running ? 'running' : 'paused';
  st.className = A.clock.running ? 'pill ok-state' : 'pill hidden-state';
  // Only the button that can act is shown: Start/Resume while paused, Pause while running.
  $('#clock-start').hidden = A.clock.running;
  $('#clock-pause').hidden = !A.clock.running;
  $('#clock-start').textContent = A.clock.time >= 1000 ? 'Resume' : 'Start';
  renderPauseBanner(t);
}

// renderPauseBanner says loudly, on every tab, that judging is not running: judges are
// told "Judging is paused" and get no projects until the clock runs.
function renderPauseBanner(t) {
  const b = $('#pause-banner');
  b.hidden = A.clock.running;
  if (A.clock.running) return;
  let text;
  if (A.published) text = 'Results are published: judging is over, and the screens, the website and team pages show the winners.';
  else if (A.deliberation) text = 'Deliberation is on: judging is closed and the clock is paused.';
  else if (t < 1000) text = 'Judging has not started: judges see "Judging is paused" and get no projects until you press Start.';
  else text = `Judging is paused at ${fmtClock(t)}: judges see "Judging is paused" and get no projects until you press Resume.`;
  $('#pause-text').textContent = text;
  $('#pause-resume').hidden = A.deliberation || A.published;
  $('#pause-resume').textContent = t < 1000 ? 'Start judging' : 'Resume judging';
}
$('#pause-resume').addEventListener('click', () => clockCmd('unpause'));
// winners.js says whether results are published (the banner then says judging is over).
window.addEventListener('podium:published', (ev) => {
  if (A.published === ev.detail) return;
  A.published = ev.detail;
  renderClock();
});

async function clockCmd(what) {
  const r = await run(api('POST', `/api/admin/clock/${what}`));
  if (r && r.clock) {
    // The socket's clock message carries the elapsed time; fetch it now for a snappy UI.
    loadClock();
  }
}
$('#clock-start').addEventListener('click', () => clockCmd('unpause'));
$('#clock-pause').addEventListener('click', () => clockCmd('pause'));
$('#clock-reset').addEventListener('click', async () => {
  if (await confirmDanger('Reset the clock?', 'The judging clock goes back to 0:00:00 and stops.', 'Reset clock')) clockCmd('reset');
});

export function setDeliberation(on) {
  A.deliberation = on;
  const b = $('#deliberation');
  b.setAttribute('aria-pressed', on ? 'true' : 'false');
  b.textContent = on ? 'End deliberation' : 'Start deliberation';
  b.className = on ? 'danger' : '';
  renderClock();
}
$('#deliberation').addEventListener('click', async () => {
  const start = !A.deliberation;
  if (start && !(await confirmDanger('Start deliberation?', 'Judges can no longer finish, rank or star projects, and the clock pauses.', 'Start deliberation'))) return;
  const r = await run(api('POST', '/api/admin/deliberation', { start }));
  if (r) setDeliberation(start);
});
