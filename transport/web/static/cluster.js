// Cluster card on the dashboard's overview (docs/behaviour.md#cluster): shown only when this node is part
// of a cluster (GET /api/admin/cluster answers a state other than "standalone"). It
// lists the nodes with the leader, whether each is reachable and when the leader last
// heard from it, and this node's term, commit and applied index, the lag between them
// and its state digest. It refreshes every few seconds while the dashboard is on screen.
import { api, h, $ } from './lib.js';

const EVERY = 3000; // ms between refreshes
const card = $('#cl-panel');
let timer = 0;
let last = null; // last good answer
let lastAt = 0;
let stopped = false;

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const fmtInt = (v) => (num(v) === null ? '–' : v.toLocaleString('en-US'));

function fmtContact(n, st) {
  if (n.id === st.node_id) return 'this node (you are here)';
  const ms = num(n.last_contact_ms);
  if (ms === null || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms ago`;
  if (ms < 120000) return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s ago`;
  return `${Math.round(ms / 60000)} min ago`;
}

// down reports whether this node can tell that n is unreachable: a leader hears from
// every node, a follower only from the leader.
const down = (n, st) => n.id !== st.node_id && n.reachable !== true && (st.state === 'leader' || n.id === st.leader_id);

function nodeRow(n, st) {
  const leader = n.id && n.id === st.leader_id;
  const me = n.id === st.node_id;
  const reachable = me || n.reachable === true;
  const known = reachable || down(n, st);
  return h('tr', { class: known && !reachable ? 'inactive' : null, dataset: { node: n.id || '' } },
    h('td', {}, h('strong', {}, n.id || '?')),
    h('td', {}, leader ? h('span', { class: 'pill ok-state' }, 'leader') : (n.voter === false ? 'non-voter' : 'follower')),
    h('td', {}, reachable ? 'yes' : (known ? h('span', { class: 'pill hidden-state' }, 'unreachable') : h('span', { class: 'muted' }, 'ask the leader'))),
    h('td', { class: 'num' }, fmtContact(n, st)),
    h('td', {}, h('code', {}, n.raft_addr || '')),
    h('td', {}, n.http_url ? h('a', { href: n.http_url + '/admin', target: '_blank', rel: 'noopener' }, n.http_url) : ''));
}

function render(st, err) {
  const commit = num(st.commit_index);
  const applied = num(st.applied_index);
  const lag = commit !== null && applied !== null ? Math.max(0, commit - applied) : null;
  const nodes = Array.isArray(st.nodes) ? st.nodes : [];
  const lost = nodes.filter((n) => down(n, st));
  const digest = st.state_digest && typeof st.state_digest === 'object' ? st.state_digest : null;
  const banners = [];
  if (err) {
    banners.push(h('p', { class: 'banner warn', role: 'status' },
      `This node did not answer the last refresh (${err}); showing what it said ${Math.round((Date.now() - lastAt) / 1000)} s ago.`));
  }
  if (!st.leader_id) {
    banners.push(h('p', { class: 'banner bad', role: 'status' },
      'No leader: changes wait up to 5 s for one, then fail. Reads keep working. A leader needs a majority of the nodes running and reachable.'));
  } else if (lost.length) {
    banners.push(h('p', { class: 'banner warn', role: 'status' },
      `${lost.map((n) => n.id).join(', ')} ${lost.length === 1 ? 'is' : 'are'} not reachable from this node. Judging goes on while a majority is up; see docs/cluster.md to replace a dead machine.`));
  }
  card.replaceChildren(
    h('h2', { id: 'cl-h' }, 'Cluster ',
      h('span', { class: 'pill', id: 'cl-state' }, `${st.node_id || 'this node'}: ${st.state}`)),
    ...banners,
    h('p', { id: 'cl-summary' },
      'Leader ', h('strong', { id: 'cl-leader' }, st.leader_id || 'none'),
      ' · term ', h('span', { id: 'cl-term' }, fmtInt(st.term)),
      ' · commit index ', h('span', { id: 'cl-commit' }, fmtInt(commit)),
      ' · applied ', h('span', { id: 'cl-applied' }, fmtInt(applied)),
      ' · lag ', h('strong', { id: 'cl-lag', class: lag ? 'lagging' : null }, lag === null ? '–' : `${fmtInt(lag)} ${lag === 1 ? 'entry' : 'entries'}`)),
    h('div', { class: 'table-wrap' },
      h('table', { class: 'data', id: 'cl-nodes', 'aria-labelledby': 'cl-h' },
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'Node'), h('th', { scope: 'col' }, 'Role'), h('th', { scope: 'col' }, 'Reachable'),
          h('th', { scope: 'col' }, 'Last contact'), h('th', { scope: 'col' }, 'Raft address'), h('th', { scope: 'col' }, 'HTTP URL'))),
        h('tbody', {}, nodes.map((n) => nodeRow(n, st))))),
    h('p', { class: 'hint' },
      digest ? `State digest at index ${fmtInt(digest.index)}: ${String(digest.sha256 || '').slice(0, 16)}… (equal on every node at the same index). ` : '',
      'Lag is what this node has committed but not yet applied. Reachable and last contact are as this node sees them: a follower hears only from the leader, the leader from every node.'));
  card.hidden = false;
}

async function refresh() {
  timer = 0;
  if (stopped) return;
  const dash = $('#view-dash');
  if (!document.hidden && dash && !dash.hidden) {
    try {
      const st = await api('GET', '/api/admin/cluster');
      if (!st || typeof st !== 'object' || !st.state || st.state === 'standalone') {
        card.hidden = true; // a standalone node stays standalone: no more polling
        stopped = true;
        return;
      }
      last = st;
      lastAt = Date.now();
      render(st, null);
    } catch (e) {
      if (e.status === 404) { card.hidden = true; stopped = true; return; } // a server without cluster routes
      if (e.status !== 401 && last) render(last, e.message); // 401: the dashboard shows the login form
    }
  }
  timer = setTimeout(refresh, EVERY);
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && !stopped && timer) {
    clearTimeout(timer);
    refresh();
  }
});

// Right after the organiser logs in, not at the next tick.
const dash = $('#view-dash');
if (dash) {
  new MutationObserver(() => {
    if (!dash.hidden && !stopped && timer) {
      clearTimeout(timer);
      refresh();
    }
  }).observe(dash, { attributes: true, attributeFilter: ['hidden'] });
}

if (card) refresh();
