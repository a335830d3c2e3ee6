// The dashboard's modal dialog (#dialog in admin.html) for the modules that live beside
// admin.js (content.js, reset.js) and admin.js's own (admin-state.js, judges.js): confirm
// with a title, a body and OK / Cancel.
import { $ } from './lib.js';

// answer resolves the open question's promise (null: none). The dialog's close event
// comes a task after it closes, so the next question may open before the last one's
// event arrives (Cancel, then the same button again at once): opening answers a
// question still waiting, from the returnValue its closing left, and a close event
// that finds the dialog open again is the earlier one's, and is not an answer.
let answer = null;

function settle(d) {
  if (d.open || !answer) return;
  const r = answer;
  answer = null;
  r(d.returnValue === 'ok');
}

/**
 * dialog shows #dialog with title and body (nodes) and resolves true when OK was
 * chosen. danger makes OK the red button.
 */
export function dialog(title, body, { okText = 'OK', cancel = true, danger = false } = {}) {
  const d = $('#dialog');
  if (!d.dataset.wired) {
    d.dataset.wired = '1';
    d.addEventListener('close', () => settle(d));
  }
  settle(d);
  $('#dialog-title').textContent = title;
  $('#dialog-body').replaceChildren(...[].concat(body || []).filter((x) => x !== null && x !== undefined && x !== false));
  const ok = $('#dialog-ok');
  ok.textContent = okText;
  ok.className = danger ? 'danger' : 'primary';
  $('#dialog-cancel').hidden = !cancel;
  return new Promise((resolve) => {
    answer = resolve;
    d.returnValue = '';
    d.showModal();
    const first = $('#dialog-body input, #dialog-body select', d); // a prompt: type at once
    // Enter must not destroy by accident. A long body opens at its top, not scrolled
    // down to the focused button.
    (first || (danger && cancel ? $('#dialog-cancel') : ok)).focus({ preventScroll: !first });
    if (!first) d.scrollTop = 0;
  });
}

/**
 * onSocket calls fn(type, data) for every websocket message the dashboard receives
 * (admin.js re-dispatches them as "podium:ws"), and with type "resync" after a
 * reconnect.
 */
export function onSocket(fn) {
  window.addEventListener('podium:ws', (ev) => fn(ev.detail.type, ev.detail.data || {}));
}

/** whenShown calls fn each time the panel el is shown (its hidden attribute goes away). */
export function whenShown(el, fn) {
  new MutationObserver(() => { if (!el.hidden) fn(); }).observe(el, { attributes: true, attributeFilter: ['hidden'] });
}
