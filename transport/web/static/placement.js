// Place it as you submit (docs/behaviour.md#judge-app): after Done, the judge says where
// the new project goes among the ones it ranked, one comparison at a time. Binary
// insertion needs at most ⌈log₂(n + 1)⌉ taps for n ranked projects.
import { $ } from './lib.js';

/** maxComparisons is the most taps placing one project among n needs. */
export const maxComparisons = (n) => Math.ceil(Math.log2(n + 1));

function fill(btn, name, detail) {
  btn.querySelector('.place-name').textContent = name;
  btn.querySelector('.place-detail').textContent = detail;
}

/**
 * place asks where fresh ({name, location}) goes among ranked (best first, items
 * {name, location}); it resolves the index to insert it at, or null when the judge goes
 * back to the notes.
 */
export function place(fresh, ranked) {
  if (ranked.length === 0) return Promise.resolve(0);
  const form = $('#place-form');
  const newBtn = $('#place-new');
  const oldBtn = $('#place-old');
  const back = $('#place-back');
  const max = maxComparisons(ranked.length);
  return new Promise((resolve) => {
    let lo = 0;
    let hi = ranked.length;
    let step = 0;
    const finish = (v) => {
      form.hidden = true;
      newBtn.onclick = null;
      oldBtn.onclick = null;
      back.onclick = null;
      resolve(v);
    };
    const ask = () => {
      if (lo >= hi) {
        finish(lo);
        return;
      }
      const mid = (lo + hi) >> 1;
      const other = ranked[mid];
      step++;
      $('#place-progress').textContent = `Comparison ${step} of at most ${max}`;
      fill(newBtn, fresh.name, `Table ${fresh.location} · the one you just saw`);
      fill(oldBtn, other.name, `Table ${other.location} · now your #${mid + 1}`);
      newBtn.onclick = () => { hi = mid; ask(); };
      oldBtn.onclick = () => { lo = mid + 1; ask(); };
      newBtn.focus();
    };
    back.onclick = () => finish(null);
    form.hidden = false;
    ask();
  });
}
