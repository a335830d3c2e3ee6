// What is happening on the floor, on the dashboard (docs/behaviour.md#dashboard-and-expo,
// docs/behaviour.md#metrics-and-audit-log): the Overview's coverage chart (projects by
// number of views, views per group), the open flags (Flags tab and the Overview's latest
// five) with Dismiss, and the Audit log tab, which the socket's log messages extend.
import { api, h, $, groupName } from './lib.js';
import { A, quiet, run, small, when } from './admin-state.js';

const MAX_LOG_LINES = 2000;

// ---------- coverage chart (inline SVG) ----------

function barChart(title, bars, { zeroBad = false } = {}) {
  const W = 480, H = 180, top = 18, bottom = 34, left = 8;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const bw = Math.max(6, Math.min(60, (W - left * 2) / Math.max(1, bars.length) - 6));
  const svg = h('svg:svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title}: ${bars.map((b) => `${b.label}: ${b.value}`).join('; ') || 'no data'}` });
  svg.append(h('svg:line', { class: 'axis', x1: left, x2: W - left, y1: H - bottom, y2: H - bottom }));
  bars.forEach((b, i) => {
    const x = left + 3 + i * (bw + 6);
    const bh = Math.round(((H - top - bottom) * b.value) / max);
    const y = H - bottom - bh;
    svg.append(
      h('svg:rect', { class: zeroBad && b.key === 0 ? 'bar zero' : 'bar', x, y, width: bw, height: Math.max(bh, b.value ? 1 : 0), dataset: { key: String(b.key), value: String(b.value) } },
        h('svg:title', {}, `${b.label}: ${b.value}`)),
      h('svg:text', { x: x + bw / 2, y: y - 4, 'text-anchor': 'middle' }, String(b.value)),
      h('svg:text', { x: x + bw / 2, y: H - bottom + 16, 'text-anchor': 'middle' }, b.short ?? b.label),
    );
  });
  return svg;
}

export function renderCoverage() {
  const active = A.projects.filter((p) => p.active);
  const maxSeen = Math.max(0, ...active.map((p) => p.seen));
  const counts = new Array(maxSeen + 1).fill(0);
  for (const p of active) counts[p.seen]++;
  const bars = counts.map((n, v) => ({ key: v, label: `${v} view${v === 1 ? '' : 's'}`, short: String(v), value: n }));
  const cov = $('#coverage');
  cov.replaceChildren(active.length ? barChart('Projects by number of views', bars, { zeroBad: true }) : h('p', { class: 'muted' }, 'No active projects yet.'));
  cov.dataset.counts = counts.join(',');

  const names = A.options ? A.options.group_names : A.groupInfo.names;
  const ngroups = Math.max(A.options ? A.options.num_groups : 1, ...active.map((p) => p.group + 1));
  const perGroup = new Array(ngroups).fill(0);
  for (const p of active) perGroup[p.group] += p.seen;
  const gbars = perGroup.map((v, g) => ({ key: g, label: groupName({ names }, g), short: groupName({ names }, g).slice(0, 10), value: v }));
  const gv = $('#group-views');
  const groupsOn = !!A.groupInfo.enabled; // "Views per group" only with groups on
  gv.hidden = !groupsOn;
  $('#grp-title').hidden = !groupsOn;
  gv.replaceChildren(active.length ? barChart('Views per group', gbars) : h('p', { class: 'muted' }, 'No views yet.'));
  gv.dataset.counts = perGroup.join(',');
}

// ---------- flags ----------

const flagTable = { root: $('#flags-table') };

export async function loadFlags() {
  const list = await quiet(api('GET', '/api/admin/flags'));
  if (!Array.isArray(list)) return;
  A.flags = list;
  renderFlags();
}

function flagRow(f) {
  const text = `${f.project_name} (table ${f.project_location}) · ${f.reason} · ${f.judge_name} · ${when(f.time)}`;
  return h('li', {}, h('span', {}, text), small('Dismiss', () => dismissFlag(f), { aria: `Dismiss flag on ${f.project_name} (${f.reason})` }));
}

function renderFlags() {
  $('#flag-count').textContent = String(A.flags.length);
  $('#stat-flags').textContent = String(A.flags.length);
  const latest = [...A.flags].reverse().slice(0, 5);
  $('#flags-mini').replaceChildren(...latest.map((f) => flagRow(f)));
  $('#flags-mini-empty').hidden = A.flags.length > 0;
  flagTable.root.replaceChildren(
    h('div', { class: 'card' }, h('h2', {}, `Flags (${A.flags.length})`),
      A.flags.length ? h('ul', { class: 'flags' }, ...[...A.flags].reverse().map((f) => flagRow(f))) : h('p', { class: 'muted' }, 'No open flags.')),
  );
}

async function dismissFlag(f) {
  if (await run(api('DELETE', `/api/admin/flag/${f.id}`), 'Flag dismissed.')) loadFlags();
}

// ---------- audit log ----------

export async function loadLog() {
  const r = await quiet(api('GET', '/api/admin/log'));
  if (!r || typeof r.log !== 'string') return;
  A.logLines = r.log.split('\n').filter(Boolean).slice(-MAX_LOG_LINES);
  $('#log').textContent = A.logLines.join('\n');
  scrollLog(true);
}

export function appendLog(lines) {
  if (!lines.length) return;
  const box = $('#log');
  const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
  A.logLines.push(...lines);
  if (A.logLines.length > MAX_LOG_LINES) {
    A.logLines = A.logLines.slice(-MAX_LOG_LINES);
    box.textContent = A.logLines.join('\n');
  } else {
    box.append((box.textContent ? '\n' : '') + lines.join('\n'));
  }
  scrollLog(atBottom);
}

export function scrollLog(force) {
  const box = $('#log');
  if (force) box.scrollTop = box.scrollHeight;
}
