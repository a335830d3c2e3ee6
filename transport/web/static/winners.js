// The event's ending on the dashboard (docs/behaviour.md#after-judging, SPEC §5c):
// - the Winners tab: for each prize Podium's proposed winners with how sure it is, in
//   words; the organiser reorders or replaces them, then publishes (one button, a
//   confirmation naming what happens) or takes the winners back;
// - feedback review: every feedback item judges wrote for the teams, each removable,
//   and the CSV exports;
// - the card of the team pages (#tl-card), which team-links.js draws: every team's
//   link, mailing them, the printable QR sheet;
// - the published state on the Overview.
// It follows the dashboard's socket (admin.js re-dispatches every message): a "winners"
// message (a publish or a take-back anywhere) reloads. call, sessionGone and when are
// team-links.js's too; this module imports nothing from it.
import { api, h, $, toast, throttle } from './lib.js';
import { dialog, onSocket, whenShown } from './dialog.js';

const W = {
  data: null, // GET /api/admin/winners
  projects: [], // GET /api/project/list
  drafts: new Map(), // prize id -> [project ids, best first]: what Publish sends
  edited: new Set(), // prize ids the organiser changed since the last load
  feedback: null, // the "share feedback" box, once touched
  fb: [], // GET /api/admin/feedback
  missing: false, // the server has no winners route
};

const root = $('#winners-root');
const panel = $('#panel-winners');

const pct = (p) => `${Math.round(p * 100)}\u00a0%`; // "53 %" never wraps before the sign
const ordinal = (n) => {
  const s = ['th', 'st', 'nd', 'rd'];
  const v = n % 100;
  return `${n}${s[(v - 20) % 10] || s[v] || s[0]}`;
};
export const when = (ms) => new Date(ms).toLocaleString([], { weekday: 'short', hour: 'numeric', minute: '2-digit' });
const ago = (ms) => {
  const m = Math.round((Date.now() - ms) / 60000);
  if (m < 1) return 'just now';
  if (m < 60) return `${m} minute${m === 1 ? '' : 's'} ago`;
  const hr = Math.round(m / 60);
  return `${hr} hour${hr === 1 ? '' : 's'} ago`;
};

export function sessionGone(e) {
  if (e && e.status === 401 && !$('#view-dash').hidden) { location.reload(); return true; }
  return false;
}

export async function call(method, path, body, okMsg) {
  try {
    const r = await api(method, path, body);
    if (okMsg) toast(okMsg);
    return r || true;
  } catch (e) {
    if (!sessionGone(e)) toast(e.message, true);
    return null;
  }
}

// ---------- certainty in words ----------

/**
 * certainty says how sure Podium is that the project at this place belongs in the
 * prize's places, from the proposal's p: {words, detail, cls}. p is the chance of being
 * among the places, not of the exact place.
 */
export function certainty(prize, id, list) {
  const prop = prize.proposed || [];
  const i = prop.findIndex((x) => x.id === id);
  if (i < 0) return { words: 'Your choice', detail: 'Not among the projects Podium proposes for this prize.', cls: 'sure-own' };
  const { p } = prop[i];
  const where = prize.places === 1 ? 'of being the winner' : `of a top-${prize.places} place`;
  const detail = `${pct(p)} chance ${where}`;
  if (p >= 0.9) return { words: 'Very likely', detail, cls: 'sure-high' };
  if (p >= 0.7) return { words: 'Likely', detail, cls: 'sure-mid' };
  if (p >= 0.4) {
    const k = prop.findIndex((x) => !list.includes(x.id));
    if (k >= 0) return { words: `A coin toss with #${k + 1}`, detail: `${detail}; #${k + 1} ${prop[k].name} (table ${prop[k].location}) has ${pct(prop[k].p)}`, cls: 'sure-toss' };
    return { words: 'A coin toss', detail, cls: 'sure-toss' };
  }
  return { words: 'Uncertain', detail: `${detail}: the judges' rankings do not settle it`, cls: 'sure-low' };
}

// ---------- data ----------

const prizes = () => (W.data && W.data.prizes) || [];
const projectById = (id) => W.projects.find((p) => p.id === id);

function defaultDraft(pz) {
  if (W.data.published && (pz.winners || []).length) return pz.winners.map((w) => w.id);
  return (pz.proposed || []).slice(0, pz.places).map((x) => x.id);
}

/** eligible lists the projects that may win the prize: active, and in its track. */
function eligible(pz) {
  return W.projects.filter((p) => p.active && (!pz.track || (p.challenge_list || []).includes(pz.track)));
}

function nameOf(pz, id) {
  const e = (pz.proposed || []).find((x) => x.id === id) || (pz.winners || []).find((x) => x.id === id) || projectById(id);
  return e ? { name: e.name, location: e.location } : { name: 'Unknown project', location: '?' };
}

async function load() {
  let data;
  try {
    data = await api('GET', '/api/admin/winners');
  } catch (e) {
    if (e.status === 404) { W.missing = true; renderAll(); }
    return;
  }
  W.missing = false;
  // The project list (for "Replace with…") only while the tab is open: it is large.
  if (!panel.hidden || !W.projects.length) {
    const list = await api('GET', '/api/project/list').catch(() => null);
    if (Array.isArray(list)) W.projects = list;
  }
  W.data = data;
  const ids = new Set(prizes().map((p) => p.id));
  for (const id of [...W.drafts.keys()]) if (!ids.has(id)) { W.drafts.delete(id); W.edited.delete(id); }
  for (const pz of prizes()) if (!W.edited.has(pz.id)) W.drafts.set(pz.id, defaultDraft(pz));
  renderAll();
}

async function loadFeedback() {
  const fb = await api('GET', '/api/admin/feedback').catch(() => null);
  if (Array.isArray(fb)) W.fb = fb;
  renderFeedback();
}

const refresh = throttle(() => { load(); if (!panel.hidden) loadFeedback(); }, 800);

// ---------- the Winners tab ----------

function build() {
  root.replaceChildren(
    h('div', { id: 'wn-status', role: 'status' }),
    h('div', { id: 'wn-prizes' }),
    h('div', { class: 'card publish-bar', id: 'wn-publish' },
      h('label', { class: 'inline' }, h('input', {
        type: 'checkbox', id: 'wn-feedback',
        onchange: (ev) => { W.feedback = ev.target.checked; renderStatus(); },
      }), 'Share judges\' feedback with the teams (on each team\'s own page, without judges\' names)'),
      h('div', { class: 'row mt' },
        h('button', { type: 'button', id: 'wn-publish-btn', class: 'primary big-action', onclick: publish }, 'Publish winners'),
        h('button', { type: 'button', id: 'wn-takeback', class: 'danger', hidden: true, onclick: takeBack }, 'Take back'),
        h('span', { id: 'wn-publish-note', class: 'hint' }))),
    h('section', { class: 'card', id: 'fb-card', 'aria-labelledby': 'fb-h' }),
    h('section', { class: 'card', id: 'tl-card', 'aria-labelledby': 'tl-h' }),
  );
  renderFeedback();
}

function renderAll() {
  renderStatus();
  renderPrizes();
  renderOverview();
}

function changedSincePublish() {
  if (!W.data || !W.data.published) return false;
  return prizes().some((pz) => JSON.stringify(W.drafts.get(pz.id) || []) !== JSON.stringify((pz.winners || []).map((w) => w.id)))
    || (W.feedback !== null && W.feedback !== !!W.data.feedback);
}

function renderStatus() {
  const box = $('#wn-status');
  if (!box) return;
  const cb = $('#wn-feedback');
  if (W.missing) {
    box.replaceChildren(h('p', { class: 'banner warn' }, 'This server cannot publish winners yet (no /api/admin/winners): update Podium.'));
    return;
  }
  if (!W.data) { box.replaceChildren(h('p', { class: 'muted' }, 'Loading…')); return; }
  const d = W.data;
  cb.checked = W.feedback ?? !!d.feedback;
  const pub = $('#wn-publish-btn');
  const back = $('#wn-takeback');
  back.hidden = !d.published;
  pub.textContent = d.published ? 'Publish changes' : 'Publish winners';
  pub.disabled = !prizes().length || (d.published && !changedSincePublish());
  const note = $('#wn-publish-note');
  if (!prizes().length) note.textContent = 'Add prizes in Settings → Prizes first.';
  else if (d.published && !changedSincePublish()) note.textContent = 'What you see is what is published.';
  else if (d.published) note.textContent = 'Your changes are not published yet.';
  else note.textContent = 'Nothing is shown outside this dashboard until you publish.';
  let node;
  if (d.published) {
    node = (h('div', { class: 'banner ok live-state', dataset: { state: 'published' } },
      h('span', { class: 'pill live' }, 'Live'), ' ',
      h('strong', {}, `Winners published ${when(d.published_at)}`), ` (${ago(d.published_at)}). `,
      'Shown now on the expo and door screens, the event website and every team page; ',
      d.feedback ? 'teams can read the judges\' feedback on their page.' : 'judges\' feedback is not shared with teams.',
      changedSincePublish() ? h('p', { class: 'warn-line' }, 'You have changed the lists below since: press "Publish changes" to show them.') : null));
  } else {
    node = h('p', { class: 'banner info', dataset: { state: 'draft' } },
      h('strong', {}, 'Not published. '), d.published_at ? `Taken back after being published ${when(d.published_at)}. ` : '',
      'Check each prize\'s winners below, change the order if the judges\' discussion says so, then publish: every screen shows them at once.');
  }
  // The box is a live region: it is replaced only when what it says changed.
  const cur = box.firstElementChild;
  if (!cur || cur.textContent !== node.textContent || cur.dataset.state !== node.dataset.state) box.replaceChildren(node);
}

let prizesSig = '';
let prizesPending = false;

function renderPrizes(force = false) {
  const box = $('#wn-prizes');
  if (!box) return;
  // Redraw only when something shown changed, and never under an open "Replace with…".
  const sig = JSON.stringify([W.data, [...W.drafts], W.projects.map((p) => [p.id, p.name, p.location, p.active])]);
  if (sig === prizesSig) return;
  if (!force && document.activeElement && document.activeElement.matches('#wn-prizes select')) {
    if (!prizesPending) {
      prizesPending = true;
      document.activeElement.addEventListener('blur', () => { prizesPending = false; renderPrizes(); }, { once: true });
    }
    return;
  }
  prizesSig = sig;
  if (!W.data) { box.replaceChildren(); return; }
  if (!prizes().length) {
    box.replaceChildren(h('div', { class: 'card' }, h('h2', {}, 'No prizes yet'),
      h('p', {}, 'List the event\'s prizes in ', h('a', { href: '#prizes-root', onclick: (ev) => { ev.preventDefault(); $('#tab-settings').click(); $('#prizes-root').scrollIntoView(); } }, 'Settings → Prizes'),
        ': an overall prize with its places, and one for each sponsor track. Podium then proposes their winners here.')));
    return;
  }
  const focus = document.activeElement && box.contains(document.activeElement) ? document.activeElement.dataset.focusKey : '';
  box.replaceChildren(...prizes().map(prizeCard));
  if (focus) {
    const el = box.querySelector(`[data-focus-key="${CSS.escape(focus)}"]`);
    if (el && !el.disabled) el.focus();
  }
}

function setDraft(pz, list) {
  W.drafts.set(pz.id, list);
  W.edited.add(pz.id);
  renderStatus();
  renderPrizes(true);
}

function prizeCard(pz) {
  const list = W.drafts.get(pz.id) || [];
  const prop = pz.proposed || [];
  const fromProposal = JSON.stringify(list) === JSON.stringify(prop.slice(0, pz.places).map((x) => x.id));
  const published = W.data.published && JSON.stringify(list) === JSON.stringify((pz.winners || []).map((w) => w.id));
  const rows = list.map((id, i) => placeRow(pz, list, id, i));
  const open = pz.places - list.length;
  for (let i = 0; i < open; i++) rows.push(emptyRow(pz, list, list.length + i));
  const next = prop.filter((x) => !list.includes(x.id)).slice(0, 3);
  const state = published ? h('span', { class: 'pill live' }, 'published') : (fromProposal ? h('span', { class: 'pill' }, 'Podium\'s proposal') : h('span', { class: 'pill prio' }, 'changed by you'));
  return h('section', { class: 'card prize-card', 'aria-labelledby': `wn-h-${pz.id}`, dataset: { prize: pz.id } },
    h('div', { class: 'card-head' },
      h('h2', { id: `wn-h-${pz.id}` }, pz.name, ' ', h('span', { class: 'hint' }, pz.track ? `· ${pz.track} track · ` : '· overall · ', `${pz.places} place${pz.places === 1 ? '' : 's'}`)),
      state),
    h('p', { class: 'hint' }, pz.track
      ? `Proposed from the ${pz.track} judges' own rankings and stars: ${pz.track_judges} judge${pz.track_judges === 1 ? '' : 's'}, ${pz.track_views.toFixed(1)} views per project.`
      : 'Proposed from every general judge\'s rankings (the Results tab\'s ratings).'),
    pz.track && prop.length && pz.track_views < 3 ? h('p', { class: 'hint shortlist' },
      'Under 3 views per project the order is a shortlist, not a verdict: the true best comes first in fewer than half of such events. Ask the sponsor to compare the top three.') : null,
    !prop.length && !list.length ? h('p', { class: 'muted' }, 'No project has been judged for this prize yet.') : null,
    h('ol', { class: 'places' }, ...rows),
    next.length ? h('p', { class: 'next-line hint' }, 'Next in line: ', ...next.flatMap((x, k) => [k ? ', ' : '', h('span', {}, `${x.name} (table ${x.location}, ${pct(x.p)})`)])) : null,
    fromProposal ? null : h('div', { class: 'row' }, h('button', {
      type: 'button', class: 'small', dataset: { focusKey: `${pz.id}:reset` },
      onclick: () => { W.drafts.set(pz.id, prop.slice(0, pz.places).map((x) => x.id)); W.edited.add(pz.id); renderStatus(); renderPrizes(); },
    }, 'Back to Podium\'s proposal')));
}

function replaceSelect(pz, list, i, current) {
  const taken = new Set(list);
  const prop = (pz.proposed || []).filter((x) => !taken.has(x.id));
  const propIds = new Set((pz.proposed || []).map((x) => x.id));
  const others = eligible(pz).filter((p) => !taken.has(p.id) && !propIds.has(p.id)).sort((a, b) => a.location - b.location);
  const label = current ? `Replace ${ordinal(i + 1)} place (${current}) with` : `Choose the ${ordinal(i + 1)} place`;
  const sel = h('select', {
    class: 'replace', 'aria-label': label, dataset: { focusKey: `${pz.id}:${i}:replace` },
    onchange: (ev) => {
      const id = ev.target.value;
      if (!id) return;
      const next = [...list];
      next[i] = id;
      setDraft(pz, next);
    },
  },
  h('option', { value: '' }, current ? 'Replace with…' : 'Choose a project…'),
  prop.length ? h('optgroup', { label: 'Proposed' }, ...prop.map((x) => h('option', { value: x.id }, `${x.name} · table ${x.location} · ${pct(x.p)}`))) : null,
  others.length ? h('optgroup', { label: pz.track ? `Other ${pz.track} projects` : 'Other projects' }, ...others.map((p) => h('option', { value: p.id }, `${p.name} · table ${p.location}`))) : null);
  return sel;
}

function placeRow(pz, list, id, i) {
  const { name, location } = nameOf(pz, id);
  const c = certainty(pz, id, list);
  const move = (d) => {
    const next = [...list];
    [next[i], next[i + d]] = [next[i + d], next[i]];
    setDraft(pz, next);
  };
  return h('li', { class: 'place', dataset: { id, place: String(i + 1) } },
    h('span', { class: `medal m${i + 1}`, 'aria-hidden': 'true' }, String(i + 1)),
    h('div', { class: 'place-main' },
      h('div', { class: 'place-name' }, h('span', { class: 'visually-hidden' }, `${ordinal(i + 1)} place: `), name, ' ', h('span', { class: 'hint nowrap' }, `table ${location}`)),
      h('div', { class: `sure ${c.cls}` }, h('strong', {}, c.words), ' ', h('span', { class: 'hint' }, c.detail))),
    h('div', { class: 'place-actions' },
      h('button', { type: 'button', class: 'small', 'aria-label': `Move ${name} up`, disabled: i === 0, dataset: { focusKey: `${pz.id}:${i}:up` }, onclick: () => move(-1) }, '↑'),
      h('button', { type: 'button', class: 'small', 'aria-label': `Move ${name} down`, disabled: i === list.length - 1, dataset: { focusKey: `${pz.id}:${i}:down` }, onclick: () => move(1) }, '↓'),
      replaceSelect(pz, list, i, name),
      h('button', {
        type: 'button', class: 'small', 'aria-label': `Remove ${name} from ${pz.name}`, dataset: { focusKey: `${pz.id}:${i}:remove` },
        onclick: () => setDraft(pz, list.filter((x) => x !== id)),
      }, '✕')));
}

function emptyRow(pz, list, i) {
  return h('li', { class: 'place empty', dataset: { place: String(i + 1) } },
    h('span', { class: `medal m${i + 1}`, 'aria-hidden': 'true' }, String(i + 1)),
    h('div', { class: 'place-main' }, h('div', { class: 'place-name muted' }, `${ordinal(i + 1)} place: nobody yet`)),
    h('div', { class: 'place-actions' }, i === list.length ? replaceSelect(pz, list, i, '') : null));
}

function summary() {
  return h('ul', { class: 'publish-summary' }, ...prizes().map((pz) => {
    const list = W.drafts.get(pz.id) || [];
    return h('li', {}, h('strong', {}, pz.name), ': ',
      list.length ? list.map((id, i) => `${ordinal(i + 1)} ${nameOf(pz, id).name} (table ${nameOf(pz, id).location})`).join(', ') : 'no winner (left out)');
  }));
}

async function publish() {
  const share = $('#wn-feedback').checked;
  const again = W.data.published;
  const body = [
    h('p', {}, again ? 'The published winners are replaced by these:' : 'These winners are announced:'),
    summary(),
    h('p', {}, h('strong', {}, 'What happens at once:')),
    h('ul', {},
      h('li', {}, 'The expo display and the door screens switch to the winners.'),
      h('li', {}, 'The event website\'s winners list (/v1/public/winners) is updated.'),
      h('li', {}, share
        ? 'Each team\'s page shows the winners, any prize the team won, and the feedback judges wrote for it (without judges\' names).'
        : 'Each team\'s page shows the winners and any prize the team won. Judges\' feedback is not shared (tick the box to share it).')),
    h('p', { class: 'hint' }, 'You can take this back at any time; changes are written to the audit log.'),
  ];
  if (!(await dialog(again ? 'Publish these changes?' : 'Publish the winners?', body, { okText: again ? 'Publish changes' : 'Publish winners' }))) return;
  const req = {
    prizes: prizes().map((pz) => ({ prize: pz.id, winners: W.drafts.get(pz.id) || [] })).filter((x) => x.winners.length),
    feedback: share,
  };
  try {
    await api('POST', '/api/admin/winners/publish', req);
  } catch (e) {
    if (sessionGone(e)) return;
    await dialog('Not published', h('p', {}, e.status === 400 ? `The server refused the lists: ${e.message} Nothing was changed.` : `${e.message} Nothing was changed; try again.`), { cancel: false });
    return;
  }
  W.edited.clear();
  W.feedback = null;
  toast('Winners published: the screens show them now.');
  load();
}

async function takeBack() {
  const ok = await dialog('Take back the winners?', [
    h('ul', {},
      h('li', {}, 'The expo display and the door screens go back to the project list.'),
      h('li', {}, 'The event website\'s winners list is emptied.'),
      h('li', {}, 'Team pages no longer show winners, prizes or feedback.')),
    h('p', { class: 'hint' }, 'Your lists stay here, so you can publish again.'),
  ], { okText: 'Take back', danger: true });
  if (!ok) return;
  if (await call('DELETE', '/api/admin/winners/publish', undefined, 'Winners taken back.')) {
    // Keep what was published as the draft, to publish again after a fix.
    for (const pz of prizes()) if (!W.edited.has(pz.id) && (pz.winners || []).length) { W.drafts.set(pz.id, pz.winners.map((w) => w.id)); W.edited.add(pz.id); }
    load();
  }
}

// ---------- feedback review ----------

function renderFeedback() {
  const card = $('#fb-card');
  if (!card) return;
  const rows = W.fb.map((f) => h('tr', { dataset: { judge: f.judge_id, project: f.project_id } },
    h('td', { class: 'num', 'data-label': 'Table' }, String(f.location)),
    h('td', { class: 'name', 'data-label': 'Project' }, h('div', { class: 'name-box' }, f.project_name)),
    h('td', { 'data-label': 'Judge' }, f.judge_name),
    h('td', { class: 'feedback-text', 'data-label': 'Feedback' }, f.feedback),
    h('td', { class: 'actions-cell', 'data-label': 'Action' }, h('button', {
      type: 'button', class: 'small danger', 'aria-label': `Remove ${f.judge_name}'s feedback on ${f.project_name}`,
      onclick: () => removeFeedback(f),
    }, 'Remove'))));
  card.replaceChildren(
    h('div', { class: 'card-head' }, h('h2', { id: 'fb-h' }, `Feedback for teams (${W.fb.length})`),
      h('div', { class: 'row' },
        h('a', { class: 'button small', href: '/api/admin/export/feedback', download: '' }, 'Feedback (CSV)'),
        h('a', { class: 'button small', href: '/api/admin/export/team-links', download: '' }, 'Team links (CSV)'))),
    h('p', { class: 'hint' }, 'What judges wrote for the teams, separate from their private notes. Teams read it on their team page, without judges\' names, only if you publish with "Share judges\' feedback" ticked. '
      + 'Read it before it goes out and remove anything unkind or wrong. The CSV has one row per project, for your own mail merge.'),
    W.fb.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'data feedback-table' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'num' }, 'Table'), h('th', { scope: 'col' }, 'Project'), h('th', { scope: 'col' }, 'Judge'), h('th', { scope: 'col' }, 'Feedback'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Action')))),
        h('tbody', {}, ...rows)))
      : h('p', { class: 'muted' }, 'No feedback written yet.'));
}

async function removeFeedback(f) {
  const ok = await dialog('Remove this feedback?', [
    h('p', {}, `${f.judge_name} on ${f.project_name} (table ${f.location}):`),
    h('blockquote', { class: 'quote' }, f.feedback),
    h('p', {}, 'It is deleted and never reaches the team. The removal is written to the audit log.'),
  ], { okText: 'Remove feedback', danger: true });
  if (!ok) return;
  if (await call('DELETE', `/api/admin/feedback/${encodeURIComponent(f.judge_id)}/${encodeURIComponent(f.project_id)}`, undefined, 'Feedback removed.')) loadFeedback();
}

// ---------- overview ----------

// tabPill marks the Winners tab "live" while the winners are published.
function tabPill(on) {
  const tab = $('#tab-winners');
  let pill = $('.pill', tab);
  if (on && !pill) tab.append(' ', pill = h('span', { class: 'pill live' }, 'live'));
  if (!on && pill) pill.remove();
}

function renderOverview() {
  tabPill(!!(W.data && W.data.published));
  window.dispatchEvent(new CustomEvent('podium:published', { detail: !!(W.data && W.data.published) }));
  const card = $('#winners-state');
  if (W.missing || !W.data) { card.hidden = true; return; }
  const d = W.data;
  card.hidden = false;
  const open = h('button', { type: 'button', class: 'small', onclick: () => $('#tab-winners').click() }, 'Open Winners');
  let body;
  if (d.published) {
    body = [h('span', { class: 'pill live' }, 'Live'), ' ', h('strong', {}, `Published ${when(d.published_at)}`), ` (${ago(d.published_at)}): on the expo and door screens, the website and team pages`,
      d.feedback ? ', with judges\' feedback for the teams.' : '; feedback not shared.'];
  } else if (!prizes().length) {
    body = ['Not published. No prizes yet: add them in Settings → Prizes.'];
  } else {
    body = [h('span', { class: 'pill' }, 'Not published'), ` ${prizes().length} prize${prizes().length === 1 ? '' : 's'} ready to confirm.`];
  }
  card.dataset.state = d.published ? 'published' : 'draft';
  card.replaceChildren(h('div', { class: 'card-head' }, h('h2', { id: 'ws-h' }, 'Winners'), open), h('p', {}, ...body));
}

// ---------- wiring ----------

build();
onSocket((type, d) => {
  if (type === 'resync' || type === 'winners') refresh();
  else if (type === 'changed' && ['prizes', 'winners'].includes(d.kind)) refresh();
  else if (type === 'changed' && !panel.hidden && ['project', 'ratings', 'options', 'feedback', 'judge'].includes(d.kind)) refresh();
});
window.addEventListener('podium:prizes', () => load());
whenShown(panel, () => { load(); loadFeedback(); });
setInterval(() => { if (W.data && W.data.published) { renderOverview(); if (!panel.hidden && !root.contains(document.activeElement)) renderStatus(); } }, 60000);
