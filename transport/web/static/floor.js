// The Overview's warning about judges on plain http (docs/behaviour.md#trust-on-the-floor):
// a phone that reaches Podium over http:// from another machine gets no service
// worker, so the judge app cannot open while offline. The server counts such judges
// (GET /api/admin/floor-https); while any did in the last minutes, the Overview says
// so, what it costs, and how to fix it.
import { api, h, $ } from './lib.js';

const EVERY = 30000; // ms between checks
const box = $('#floor-https');

function render(st) {
  const n = st && st.plain_http_judges;
  if (!n) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const who = n === 1 ? '1 judge is' : `${n} judges are`;
  box.replaceChildren(
    h('h2', {}, 'Judges are on plain http: no offline mode'),
    h('p', {}, `${who} using Podium over http:// from another machine (last ${st.window_minutes} minutes). `,
      'Browsers give the judge app its offline mode only over https:// (or on this machine), so when the hall\u2019s Wi-Fi drops, ',
      'these phones cannot reopen the app: the judge must keep the page open and not reload it.'),
    h('p', {}, 'To fix it, serve Podium over HTTPS: start it with TLS_CERT_FILE and TLS_KEY_FILE (a certificate you have), ',
      'or TLS_DOMAIN=your.domain for an automatic certificate, or put a tunnel or Caddy in front and set PUBLIC_URL. ',
      'See docs/operations.md, \u201cHTTPS on the floor\u201d.'),
  );
  box.hidden = false;
}

const RETRY = 2000; // ms between checks while not logged in or the server is away

async function check() {
  let next = EVERY;
  try {
    render(await api('GET', '/api/admin/floor-https'));
  } catch {
    next = RETRY; // not logged in yet, or the server is away
  }
  setTimeout(() => (document.hidden ? setTimeout(check, EVERY) : check()), next);
}

if (box) check();
