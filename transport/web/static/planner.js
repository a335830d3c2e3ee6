// Planner on the Settings tab (docs/behaviour.md#planner): the assignment_goal setting
// ("the podium" or "the whole field") with the simulated figures for this event's own
// size beside it. The figures come from GET /api/admin/planner, only when asked for (a
// simulation takes a few seconds of the server's CPU; the answer is remembered per size).
import { api, h, $, toast } from '/static/lib.js';

// Non-breaking spaces: "0.66 ± 0.06" never wraps.
const fmt = (r) => `${r.mean.toFixed(2)}\u00a0±\u00a0${r.ci.toFixed(2)}`;
const names = { podium: 'Podium', field: 'Whole field' };

async function loadGoal() {
  try {
    const o = await api('GET', '/api/admin/options');
    $('#planner-goal').value = o.assignment_goal || 'podium';
  } catch {
    // not logged in yet: the tab's click loads it again
  }
}

async function estimate() {
  const btn = $('#planner-run');
  const note = $('#planner-note');
  const visits = Number($('#planner-visits').value) || 12;
  btn.disabled = true;
  note.textContent = 'Simulating this event with each goal (a few seconds)…';
  try {
    const v = await api('GET', `/api/admin/planner?visits=${encodeURIComponent(visits)}`);
    $('#planner-table tbody').replaceChildren(...['podium', 'field'].map((g) => h('tr', { 'data-goal': g },
      h('th', { scope: 'row' }, names[g] + (v.current === g ? '\u00a0(now)' : '')),
      // data-label: on a phone the table stacks and each figure carries its header.
      h('td', { class: 'num', 'data-label': 'Top 10' }, fmt(v.goals[g].top10)),
      h('td', { class: 'num', 'data-label': 'Top 3' }, fmt(v.goals[g].top3)),
      h('td', { class: 'num', 'data-label': 'Order (ρ)' }, fmt(v.goals[g].rho)))));
    note.textContent = `${v.projects} projects, ${v.judges} judges × ${v.visits} visits each; ` +
      `${v.seeds} simulated events per goal (judges of mixed care, 10% careless). ` +
      'Top 10 / top 3: share of the truly best named there; ρ: how well the whole order matches (1 = perfectly).';
  } catch (e) {
    note.textContent = e.message;
  } finally {
    btn.disabled = false;
  }
}

async function saveGoal() {
  try {
    await api('POST', '/api/admin/options', { assignment_goal: $('#planner-goal').value });
    toast(`Goal saved: ${names[$('#planner-goal').value].toLowerCase()}`);
  } catch (e) {
    toast(e.message, true);
  }
}

$('#planner-run').addEventListener('click', estimate);
$('#planner-save').addEventListener('click', saveGoal);
$('#tab-settings').addEventListener('click', loadGoal);
loadGoal();
