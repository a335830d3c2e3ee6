// Expo display: every active project by table number, with group names, a challenge
// filter and search; live updates from the websocket's "expo" messages.
import { api, h, $, groupName, LiveSocket, debounce } from './lib.js';

const E = {
  projects: new Map(), // id -> public project
  groupInfo: { names: [], enabled: false },
};

async function load() {
  const [list, gi] = await Promise.allSettled([api('GET', '/api/project/list/public'), api('GET', '/api/group-info')]);
  if (gi.status === 'fulfilled' && gi.value) E.groupInfo = gi.value;
  if (list.status === 'fulfilled' && Array.isArray(list.value)) {
    E.projects = new Map(list.value.map((p) => [p.id || `${p.location}:${p.name}`, p]));
  }
  render();
}

function challenges() {
  const set = new Set();
  for (const p of E.projects.values()) for (const c of p.challenge_list || []) set.add(c);
  return [...set].sort();
}

let filterSig = '';

function renderFilters() {
  const sig = JSON.stringify([challenges(), E.groupInfo]);
  if (sig === filterSig) return;
  filterSig = sig;
  const sel = $('#challenge');
  const cur = sel.value;
  const all = challenges();
  sel.replaceChildren(h('option', { value: '' }, 'All challenges'), ...all.map((c) => h('option', { value: c }, c)));
  sel.value = all.includes(cur) ? cur : '';
  const gsel = $('#group');
  const gcur = gsel.value;
  $('#group-filter-wrap').hidden = !E.groupInfo.enabled;
  gsel.replaceChildren(h('option', { value: '' }, 'All groups'), ...(E.groupInfo.names || []).map((n, i) => h('option', { value: String(i) }, n)));
  gsel.value = gcur && Number(gcur) < (E.groupInfo.names || []).length ? gcur : '';
}

function render() {
  renderFilters();
  const q = $('#search').value.trim().toLowerCase();
  const ch = $('#challenge').value;
  const g = $('#group').value;
  const rows = [...E.projects.values()]
    .filter((p) => !ch || (p.challenge_list || []).includes(ch))
    .filter((p) => g === '' || !E.groupInfo.enabled || String(p.group) === g)
    .filter((p) => !q || `${p.name} ${p.location} ${p.description}`.toLowerCase().includes(q))
    .sort((a, b) => a.location - b.location || a.name.localeCompare(b.name));
  $('#projects').replaceChildren(...rows.map(card));
  $('#empty').hidden = rows.length > 0;
  $('#count').textContent = `${rows.length} of ${E.projects.size} projects`;
}

function card(p) {
  const link = /^https?:\/\//i.test(p.url || '') ? h('a', { href: p.url, target: '_blank', rel: 'noopener noreferrer' }, 'Project page') : null;
  return h('li', { class: 'expo-card', dataset: { id: p.id || '' } },
    h('div', { class: 'table-no', 'aria-label': `Table ${p.location}` }, h('div', { class: 'hint' }, 'Table'), String(p.location)),
    h('div', {},
      h('h2', {}, p.name),
      E.groupInfo.enabled ? h('p', {}, h('span', { class: 'pill' }, groupName(E.groupInfo, p.group))) : null,
      (p.challenge_list || []).length ? h('p', {}, ...(p.challenge_list || []).map((c) => h('span', { class: 'pill' }, c))) : null,
      p.description ? h('p', { class: 'desc' }, p.description) : null,
      link));
}

const rerender = debounce(render, 100);

function onMessage(type, d) {
  if (type === 'expo' && d.project) {
    const id = d.project.id;
    if (d.action === 'remove') E.projects.delete(id);
    else E.projects.set(id, d.project);
    rerender();
  } else if (type === 'group_info' || (type === 'hello' && d.group_info)) {
    E.groupInfo = type === 'hello' ? d.group_info : d;
    rerender();
  }
}

$('#filters').addEventListener('submit', (ev) => ev.preventDefault());
$('#search').addEventListener('input', render);
$('#challenge').addEventListener('change', render);
$('#group').addEventListener('change', render);

let first = true;
new LiveSocket(onMessage, (up) => {
  $('#offline').hidden = up;
  if (up && !first) load(); // resync after a reconnect
  first = false;
});
load();
