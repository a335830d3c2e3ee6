// Expo display: every active project by table number, with group names, a challenge
// filter and search; live updates from the websocket's "expo" messages. With ?kiosk=1
// it is a screen for the door: no controls, large type, the judging clock, and it pages
// through the projects by itself (?seconds=N per page, default 12). ?group=<index> and
// ?challenge=<name> preset the filters (a screen per hall).
import { api, h, $, groupName, LiveSocket, debounce, fmtClock } from './lib.js';

const params = new URLSearchParams(location.search);
const KIOSK = ['1', 'true', 'yes'].includes((params.get('kiosk') || '').toLowerCase());
const PAGE_SECONDS = Math.min(300, Math.max(2, Number(params.get('seconds')) || 12));

const E = {
  projects: new Map(), // id -> public project
  groupInfo: { names: [], enabled: false, event_name: '' },
  clock: { running: false, time: 0 },
  clockAt: Date.now(),
  page: 0,
  pages: 1,
  perPage: 0,
};

async function load() {
  const [list, gi] = await Promise.allSettled([api('GET', '/api/project/list/public'), api('GET', '/api/group-info')]);
  if (gi.status === 'fulfilled' && gi.value) setGroupInfo(gi.value);
  if (list.status === 'fulfilled' && Array.isArray(list.value)) {
    E.projects = new Map(list.value.map((p) => [p.id || `${p.location}:${p.name}`, p]));
  }
  render();
}

function setGroupInfo(gi) {
  E.groupInfo = gi;
  const name = gi.event_name || 'Podium';
  $('#event-name').textContent = name;
  document.title = `Expo · ${name}`;
}

function challenges() {
  const set = new Set();
  for (const p of E.projects.values()) for (const c of p.challenge_list || []) set.add(c);
  return [...set].sort();
}

let filterSig = '';

function renderFilters() {
  const sig = JSON.stringify([challenges(), E.groupInfo.names, E.groupInfo.enabled]);
  if (sig === filterSig) return;
  const firstTime = filterSig === '';
  filterSig = sig;
  const sel = $('#challenge');
  const all = challenges();
  const cur = firstTime ? (params.get('challenge') || '') : sel.value;
  sel.replaceChildren(h('option', { value: '' }, 'All challenges'), ...all.map((c) => h('option', { value: c }, c)));
  sel.value = all.includes(cur) ? cur : '';
  if (firstTime && cur && !all.includes(cur)) filterSig = ''; // the preset waits for its projects
  const gsel = $('#group');
  const gcur = firstTime ? (params.get('group') || '') : gsel.value;
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
  if (KIOSK) paginate();
}

function card(p) {
  const link = !KIOSK && /^https?:\/\//i.test(p.url || '') ? h('a', { href: p.url, target: '_blank', rel: 'noopener noreferrer' }, 'Project page') : null;
  return h('li', { class: 'expo-card', dataset: { id: p.id || '' } },
    h('div', { class: 'table-no', 'aria-label': `Table ${p.location}` }, h('div', { class: 'hint' }, 'Table'), h('span', { class: 'num' }, String(p.location))),
    h('div', { class: 'expo-body' },
      h('h2', {}, p.name),
      E.groupInfo.enabled ? h('p', {}, h('span', { class: 'pill' }, groupName(E.groupInfo, p.group))) : null,
      (p.challenge_list || []).length ? h('p', { class: 'pills' }, ...(p.challenge_list || []).map((c) => h('span', { class: 'pill' }, c))) : null,
      p.description ? h('p', { class: 'desc' }, p.description) : null,
      link));
}

// ---------- kiosk: paging and the clock ----------

// A kiosk narrower than this (a phone) is the plain list, scrolled by hand: a door
// screen's pages of cards do not fit it (docs/behaviour.md#dashboard-and-expo).
const NARROW = matchMedia('(max-width: 700px)');

/** paginate measures how many cards fit on the screen and shows the current page. */
function paginate() {
  const grid = $('#projects');
  const items = [...grid.children];
  for (const li of items) li.hidden = false;
  grid.style.removeProperty('--card-h'); // measure at the smallest card height (CSS)
  if (!items.length || NARROW.matches) {
    E.pages = 1;
    E.page = 0;
    E.perPage = 0;
    showPage();
    return;
  }
  const cs = getComputedStyle(grid);
  const cols = Math.max(1, cs.gridTemplateColumns.split(' ').filter(Boolean).length);
  const gap = parseFloat(cs.rowGap) || 0;
  const rowH = Math.max(...items.slice(0, cols).map((li) => li.getBoundingClientRect().height));
  const foot = $('#kiosk-foot').getBoundingClientRect().height;
  const avail = window.innerHeight - grid.getBoundingClientRect().top - foot - 8;
  const rows = Math.max(1, Math.floor((avail + gap) / (rowH + gap)));
  // Then the cards grow to fill the screen's height evenly.
  grid.style.setProperty('--card-h', `${Math.floor((avail - (rows - 1) * gap) / rows)}px`);
  E.perPage = cols * rows;
  E.pages = Math.max(1, Math.ceil(items.length / E.perPage));
  if (E.page >= E.pages) E.page = 0;
  showPage();
}

function showPage() {
  const grid = $('#projects');
  [...grid.children].forEach((li, i) => { li.hidden = E.perPage > 0 && Math.floor(i / E.perPage) !== E.page; });
  grid.dataset.page = String(E.page + 1);
  grid.dataset.pages = String(E.pages);
  grid.dataset.perPage = String(E.perPage);
  $('#kiosk-page').textContent = E.pages > 1 ? `Page ${E.page + 1} of ${E.pages}` : '';
  $('#kiosk-dots').replaceChildren(...(E.pages > 1 ? Array.from({ length: E.pages }, (_, i) => h('span', { class: i === E.page ? 'on' : '' })) : []));
  grid.classList.remove('turn');
  if (E.pages < 2) return; // nothing turns
  void grid.offsetWidth; // restart the fade
  grid.classList.add('turn');
}

function nextPage() {
  if (E.pages <= 1) return;
  E.page = (E.page + 1) % E.pages;
  showPage();
}

function setClock(c) {
  E.clock = { running: !!c.running, time: Number(c.time) || 0 };
  E.clockAt = Date.now();
  renderClock();
}

function renderClock() {
  const t = E.clock.time + (E.clock.running ? Date.now() - E.clockAt : 0);
  $('#expo-clock-time').textContent = fmtClock(t);
  $('#expo-clock-state').textContent = E.clock.running ? 'running' : 'paused';
}

// ---------- live updates ----------

const rerender = debounce(render, 100);

function onMessage(type, d) {
  window.dispatchEvent(new CustomEvent('podium:ws', { detail: { type, data: d } })); // expo-winners.js
  if (type === 'expo' && d.project) {
    const id = d.project.id;
    if (d.action === 'remove') E.projects.delete(id);
    else E.projects.set(id, d.project);
    rerender();
  } else if (type === 'group_info' || (type === 'hello' && d.group_info)) {
    setGroupInfo(type === 'hello' ? d.group_info : d);
    rerender();
  }
  if (type === 'clock') setClock(d);
  else if (type === 'hello' && d.clock) setClock(d.clock);
}

$('#filters').addEventListener('submit', (ev) => ev.preventDefault());
$('#search').addEventListener('input', render);
$('#challenge').addEventListener('change', render);
$('#group').addEventListener('change', render);

if (KIOSK) {
  document.body.classList.add('kiosk');
  $('#filters').hidden = true;
  $('#kiosk-foot').hidden = false;
  setInterval(nextPage, PAGE_SECONDS * 1000);
  $('#expo-clock').hidden = false;
  setInterval(renderClock, 1000);
  // The page size follows the screen and the header (a longer event name can wrap it).
  const repage = debounce(paginate, 150);
  window.addEventListener('resize', repage);
  new ResizeObserver(repage).observe($('.topbar'));
}

let first = true;
new LiveSocket(onMessage, (up) => {
  $('#offline').hidden = up;
  if (up && !first) load(); // resync after a reconnect
  if (up) window.dispatchEvent(new CustomEvent('podium:ws', { detail: { type: 'resync', data: {} } }));
  first = false;
});
load();
