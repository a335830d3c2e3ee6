// The winners screen of the expo display and the door screen (/expo, /expo?kiosk=1;
// docs/behaviour.md#after-judging): while the organiser's winners are published it replaces
// the project list, prize by prize with places, project names and tables, in type that
// reads from across a hall on a 1,920 × 1,080 TV and still fits a 390 px phone. On a wide
// screen every page fits without scrolling; when the prizes do not fit on one, the
// pages turn by themselves (?seconds=N, as the kiosk's). It loads GET /api/winners at
// start and after every reconnect, and follows the websocket's "winners" message
// (expo.js re-dispatches every message as "podium:ws"); taking the winners back
// returns to the project list.
import { api, h, $, debounce } from './lib.js';

const params = new URLSearchParams(location.search);
const PAGE_SECONDS = Math.min(300, Math.max(4, Number(params.get('seconds')) || 12));
const NARROW = matchMedia('(max-width: 700px)');

const KIOSK = document.body.classList.contains('kiosk') || ['1', 'true', 'yes'].includes((params.get('kiosk') || '').toLowerCase());

// X.list: a visitor of the (non-kiosk) expo chose the project list over the winners.
const X = { data: null, on: false, page: 0, pages: [[]], timer: 0, list: false };

const screen = h('section', { id: 'winners-screen', class: 'winners-screen', 'aria-labelledby': 'wn-title', hidden: true },
  h('div', { class: 'wn-head' }, h('h2', { id: 'wn-title' }, 'Winners'), h('span', { id: 'wn-page', class: 'wn-page', 'aria-live': 'off' }),
    KIOSK ? null : h('button', { type: 'button', id: 'wn-to-list', class: 'small', onclick: () => { X.list = true; render(); } }, 'All projects')),
  h('ol', { id: 'wn-grid', class: 'wn-grid' }));
const back = h('p', { id: 'wn-back', class: 'banner ok', hidden: true }, 'The winners are out. ',
  h('button', { type: 'button', class: 'small', onclick: () => { X.list = false; render(); } }, 'Show the winners'));
$('#main').prepend(screen);
$('#projects').before(back);
const grid = $('#wn-grid', screen);

const ordinal = (n) => {
  const s = ['th', 'st', 'nd', 'rd'];
  const v = n % 100;
  return `${n}${s[(v - 20) % 10] || s[v] || s[0]}`;
};

function prizeCard(pz) {
  return h('li', { class: 'wn-prize', dataset: { prize: pz.name } },
    h('h3', {}, h('span', { class: 'wn-prize-name' }, pz.name), pz.track ? h('span', { class: 'wn-track' }, pz.track) : null),
    h('ol', { class: 'wn-places' }, ...(pz.winners || []).map((w) => h('li', { class: `wn-place p${w.place}`, dataset: { place: String(w.place) } },
      h('span', { class: 'wn-medal', 'aria-label': `${ordinal(w.place)} place` }, String(w.place)),
      h('span', { class: 'wn-name' }, w.name),
      h('span', { class: 'wn-table' }, h('span', { class: 'wn-table-label' }, 'Table '), h('span', { class: 'wn-table-no' }, String(w.location)))))));
}

function render() {
  const d = X.data;
  const shown = (d && d.published ? d.prizes || [] : []).filter((pz) => (pz.winners || []).length);
  const on = shown.length > 0 && !X.list;
  back.hidden = !(shown.length > 0 && X.list);
  if (on !== X.on) {
    X.on = on;
    document.body.classList.toggle('winners-on', on);
    screen.hidden = !on;
    // The project list comes back: the kiosk measures its pages again.
    if (!on) window.dispatchEvent(new Event('resize'));
  }
  screen.dataset.published = on ? '1' : '0';
  grid.replaceChildren(...shown.map(prizeCard));
  X.page = 0;
  paginate();
}

const colsFor = (n) => (n <= 3 ? n : n === 4 ? 2 : n <= 6 ? 3 : 4);

/** fits says whether the grid ends above the bottom of the screen and no name sticks out sideways. */
function fits() {
  const foot = document.body.classList.contains('kiosk') ? 8 : 16;
  if (grid.getBoundingClientRect().bottom > window.innerHeight - foot) return false;
  if (grid.scrollWidth > grid.clientWidth + 1) return false;
  // Every name whole: no word sticking out of its column, at most three lines.
  return [...grid.querySelectorAll('.wn-name')].every((n) => {
    if (!n.getClientRects().length) return true;
    const lh = parseFloat(getComputedStyle(n).lineHeight) || 20;
    return n.scrollWidth <= n.clientWidth + 1 && n.getBoundingClientRect().height <= lh * 3.2;
  });
}

function showRange(cards, from, to) {
  cards.forEach((c, i) => { c.hidden = i < from || i >= to; });
  grid.style.setProperty('--wn-cols', String(colsFor(to - from)));
}

/** paginate splits the prizes into pages that fit the screen (wide screens only). */
function paginate() {
  const cards = [...grid.children];
  X.pages = [];
  grid.style.setProperty('--wn-scale', '1');
  if (!X.on || !cards.length) { X.pages = [[0, cards.length]]; showPage(); return; }
  if (NARROW.matches) {
    showRange(cards, 0, cards.length);
    grid.style.setProperty('--wn-cols', '1');
    X.pages = [[0, cards.length]];
    showPage();
    return;
  }
  let i = 0;
  while (i < cards.length) {
    let n = Math.min(8, cards.length - i);
    for (; n > 1; n--) {
      showRange(cards, i, i + n);
      if (fits()) break;
    }
    X.pages.push([i, i + n]);
    i += n;
  }
  // The same number of pages, shared out evenly (4, 4, 1 becomes 3, 3, 3) when they fit.
  const per = Math.ceil(cards.length / X.pages.length);
  if (X.pages.length > 1 && X.pages.some(([a, z]) => z - a !== per)) {
    const even = [];
    for (let a = 0; a < cards.length; a += per) even.push([a, Math.min(a + per, cards.length)]);
    if (even.length === X.pages.length && even.every(([a, z]) => { showRange(cards, a, z); return fits(); })) X.pages = even;
  }
  if (X.page >= X.pages.length) X.page = 0;
  showPage();
}

// SCALES are the type sizes tried, largest first, for a page with room to spare: on a
// TV the names grow to fill the screen.
const SCALES = [1.7, 1.55, 1.4, 1.3, 1.2, 1.1, 1];

function grow() {
  for (const s of SCALES) {
    grid.style.setProperty('--wn-scale', String(s));
    if (fits()) return;
  }
}

function showPage() {
  const cards = [...grid.children];
  const [from, to] = X.pages[X.page] || [0, cards.length];
  grid.style.setProperty('--wn-scale', '1');
  if (!NARROW.matches && X.on) {
    showRange(cards, from, to);
    grow();
  }
  const n = X.pages.length;
  $('#wn-page').textContent = n > 1 ? `${X.page + 1} / ${n}` : '';
  grid.dataset.page = String(X.page + 1);
  grid.dataset.pages = String(n);
  clearInterval(X.timer);
  if (n > 1) {
    X.timer = setInterval(() => {
      X.page = (X.page + 1) % X.pages.length;
      showPage();
    }, PAGE_SECONDS * 1000);
    grid.classList.remove('turn');
    void grid.offsetWidth; // restart the fade
    grid.classList.add('turn');
  }
}

async function load() {
  try {
    X.data = await api('GET', '/api/winners');
  } catch {
    return; // the server has no winners (yet): the project list stays
  }
  render();
}

window.addEventListener('podium:ws', (ev) => {
  const { type, data } = ev.detail;
  if (type === 'winners') {
    X.data = data;
    X.list = false; // a new announcement is shown
    render();
  } else if (type === 'resync') {
    load();
  }
});
const repage = debounce(() => { if (X.on) { X.page = 0; paginate(); } }, 150);
window.addEventListener('resize', repage);
NARROW.addEventListener('change', repage);
load();
