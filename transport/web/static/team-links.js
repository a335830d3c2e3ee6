// The team pages on the dashboard (docs/behaviour.md#after-judging,
// docs/behaviour.md#team-links-by-mail), in the Winners tab's card #tl-card that
// winners.js lays out:
// - every team's link with its mail state, and "New link" for a link that leaked;
// - mailing every team its link;
// - the printable QR sheet (/admin#team-sheet, one card per table), drawn once the
//   organiser is logged in.
// The links reload when the tab is shown and when a project changes while it is open.
// It takes winners.js's call, sessionGone and when; winners.js imports nothing from
// here, so it is evaluated first (admin.html loads this module after it).
import { api, h, $, toast } from './lib.js';
import { dialog, onSocket, whenShown } from './dialog.js';
import { call, sessionGone, when } from './winners.js';

const T = {
  links: null, // GET /api/admin/team-links
  open: false, // the list of every team's link is unfolded
};

const panel = $('#panel-winners');
const SHEET = '#team-sheet';

// ---------- team links ----------

async function loadLinks() {
  const l = await api('GET', '/api/admin/team-links').catch(() => null);
  if (Array.isArray(l)) T.links = l;
  renderLinks();
}

function renderLinks() {
  const card = $('#tl-card');
  if (!card) return;
  const l = T.links;
  const withMail = l ? l.filter((x) => (x.contact_emails || []).length).length : 0;
  card.replaceChildren(
    h('h2', { id: 'tl-h' }, 'Team pages'),
    h('p', { class: 'hint' }, 'Every project has a private page of its own: its table, how many judges visited, and after you publish the winners and (if you share it) the judges\' feedback. '
      + 'Print the QR sheet and leave each card at its table, or mail each team its link.'),
    l ? h('p', {}, `${l.length} project${l.length === 1 ? '' : 's'}; ${withMail} with contact emails`, withMail < l.length ? `, ${l.length - withMail} without (give them the printed card).` : '.') : null,
    h('div', { class: 'row' },
      h('a', { class: 'button primary', id: 'tl-print', href: `/admin${SHEET}`, target: '_blank', rel: 'noopener' }, 'Print QR sheet'),
      h('button', { type: 'button', id: 'tl-send', onclick: sendLinks }, 'Mail links to teams'),
      h('a', { class: 'button', href: '/api/admin/export/team-links', download: '' }, 'Team links (CSV)')),
    l && l.length ? h('details', { class: 'mt', id: 'tl-list', open: T.open || undefined, ontoggle: (ev) => { T.open = ev.target.open; } },
      h('summary', {}, `Every team's link (${l.length})`),
      h('p', { class: 'hint' }, 'A link that reached the wrong people can be replaced: the old one stops working at once, and the team needs the new one (mail or print it again).'),
      h('div', { class: 'table-wrap fit' }, h('table', { class: 'data compact team-links' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'num' }, 'Table'), h('th', { scope: 'col' }, 'Project'), h('th', { scope: 'col' }, 'Contact emails'), h('th', { scope: 'col' }, 'Mail'), h('th', { scope: 'col' }, 'Link'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Action')))),
        h('tbody', {}, ...l.map((x) => h('tr', { dataset: { id: x.id } },
          h('td', { class: 'num', 'data-label': 'Table' }, String(x.location)),
          h('td', { class: 'name', 'data-label': 'Project' }, h('div', { class: 'name-box' }, x.name)),
          h('td', { class: 'email', 'data-label': 'Contact emails' }, (x.contact_emails || []).join(', ') || h('span', { class: 'muted' }, 'none')),
          h('td', { 'data-label': 'Mail' }, mailPill(x.mail)),
          h('td', { class: 'link', 'data-label': 'Link' }, h('span', { class: 'code' }, x.link)),
          h('td', { class: 'actions-cell', 'data-label': 'Action' }, h('button', {
            type: 'button', class: 'small', 'aria-label': `Replace the team link of ${x.name}`, onclick: () => rotateLink(x),
          }, 'New link')))))))) : null);
}

// The team-link mail's state, as the judges table shows the login-code mail's.
const mailLabels = { pending: 'queued', sending: 'sending', sent: 'sent', failed: 'failed', unknown: 'outcome unknown', skipped: 'not sent (no SMTP)' };
function mailPill(m) {
  if (!m) return h('span', { class: 'muted' }, '–');
  const bad = m.status === 'failed' || m.status === 'unknown';
  return h('span', { class: bad ? 'pill hidden-state' : 'pill', title: m.reason || (m.at ? when(m.at) : '') }, mailLabels[m.status] || m.status);
}

async function rotateLink(x) {
  const ok = await dialog(`Replace the link of “${x.name}”?`, [
    h('p', {}, 'The current link and its QR code stop working at once. Give the team the new one: mail the links again or print its card.'),
  ], { okText: 'Replace the link', danger: true });
  if (!ok) return;
  if (await call('POST', `/api/admin/team-links/rotate/${encodeURIComponent(x.id)}`, undefined, `New link made for ${x.name}.`)) loadLinks();
}

async function sendLinks() {
  if (!T.links) await loadLinks();
  const l = T.links || [];
  const withMail = l.filter((x) => (x.contact_emails || []).length).length;
  const ok = await dialog('Mail every team its link?', [
    h('p', {}, `Each of the ${withMail} project${withMail === 1 ? '' : 's'} with contact emails gets one email with the link to its team page.`),
    l.length > withMail ? h('p', {}, `${l.length - withMail} project${l.length - withMail === 1 ? ' has' : 's have'} no contact email: hand them their card from the QR sheet.`) : null,
    h('p', { class: 'hint' }, 'The mails go through the outbox (nothing is sent if the server has no mail settings). Sending again mails the same links again.'),
  ], { okText: 'Mail the links' });
  if (!ok) return;
  let r;
  try {
    r = await api('POST', '/api/admin/team-links/send');
  } catch (e) {
    if (sessionGone(e)) return;
    toast(e.status === 404 || e.status === 405
      ? 'This server cannot mail the links yet: download the team links (CSV) for your own mail merge, or hand out the printed cards.'
      : `Not sent: ${e.message}`, true);
    return;
  }
  const q = r.queued ?? 0;
  const parts = [`${q} email${q === 1 ? '' : 's'} queued`];
  if (r.sending) parts.push(`${r.sending} still being sent`);
  if (r.without_email) parts.push(`${r.without_email} project${r.without_email === 1 ? ' has' : 's have'} no contact email`);
  toast(`${parts.join('; ')}.`);
  loadLinks(); // each team's mail state
  setTimeout(loadLinks, 3000);
}

// ---------- the printable QR sheet (/admin#team-sheet) ----------

async function renderSheet() {
  const s = $('#team-sheet');
  const opts = await api('GET', '/api/admin/options').catch(() => null);
  const event = (opts && opts.event_name) || 'Podium';
  s.replaceChildren(
    h('div', { class: 'sheet-head no-print' },
      h('h1', { id: 'sheet-h' }, 'Team page QR sheet'),
      h('p', {}, 'One card per table. Print, cut along the lines and leave each card at its table. Teams scan it to open their own page.'),
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'primary', onclick: () => window.print() }, 'Print'),
        h('a', { class: 'button', href: '/admin' }, 'Back to the dashboard'))),
    h('p', { class: 'muted', id: 'sheet-loading' }, 'Loading the team links…'));
  let links;
  try {
    links = await api('GET', '/api/admin/team-links');
  } catch (e) {
    $('#sheet-loading').textContent = e.status === 401 ? 'Log in to print the sheet.' : `Could not load the team links: ${e.message}`;
    return false;
  }
  $('#sheet-loading').remove();
  if (!links.length) { s.append(h('p', { class: 'muted' }, 'No projects yet.')); return true; }
  s.append(h('ul', { class: 'sheet-cards', 'aria-label': 'Cards by table' }, ...links.map((l) => h('li', { class: 'sheet-card', dataset: { id: l.id } },
    h('div', { class: 'sheet-top' },
      h('div', { class: 'sheet-table' }, h('span', { class: 'sheet-table-label' }, 'Table'), h('span', { class: 'sheet-table-no' }, String(l.location))),
      h('div', { class: 'sheet-title' }, h('div', { class: 'sheet-event' }, event), h('div', { class: 'sheet-name' }, l.name))),
    h('img', { class: 'sheet-qr', src: `/api/admin/team-links/qr/${encodeURIComponent(l.id)}`, alt: `QR code of ${l.name}'s team page`, width: '150', height: '150' }),
    h('p', { class: 'sheet-line' }, 'Scan to see how your project was received after the results'),
    h('p', { class: 'sheet-link code' }, l.link)))));
  return true;
}

function sheetMode() {
  const on = location.hash === SHEET;
  document.body.classList.toggle('sheet-mode', on);
  $('#team-sheet').hidden = !on;
  if (on) {
    document.title = 'QR sheet · Podium';
    if (!$('#view-dash').hidden) renderSheet();
  }
  return on;
}

// ---------- wiring ----------

renderLinks();
onSocket((type, d) => {
  if (type === 'changed' && d.kind === 'project' && !panel.hidden) loadLinks();
});
whenShown(panel, loadLinks);

// The sheet is drawn once the organiser is logged in (the dashboard opens underneath).
sheetMode();
whenShown($('#view-dash'), () => { if (location.hash === SHEET) renderSheet(); });
window.addEventListener('hashchange', sheetMode);
