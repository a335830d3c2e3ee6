// The judge app's storage on the phone (localStorage), one namespace per judge so that
// two judges sharing a phone never see each other's queue or drafts
// (docs/behaviour.md#judge-app).
const PREFIX = 'podium.v1';
let who = '';

/** useJudge selects the judge whose data load and save read and write. */
export function useJudge(id) {
  who = id || '';
}

function read(key, def) {
  try {
    const v = localStorage.getItem(key);
    return v === null ? def : JSON.parse(v);
  } catch {
    return def;
  }
}

function write(key, v) {
  try {
    if (v === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(v));
    return true;
  } catch {
    return false; // storage full or disabled: the caller keeps going online
  }
}

/** load reads the judge's value name (def when there is none). */
export const load = (name, def) => read(`${PREFIX}.${who}.${name}`, def);

/** save writes the judge's value name (undefined removes it); false when it failed. */
export const save = (name, v) => write(`${PREFIX}.${who}.${name}`, v);

/** storageName is the localStorage key of the judge's value name (for storage events). */
export const storageName = (name) => `${PREFIX}.${who}.${name}`;

/** loadMe and saveMe keep the last judge seen on this phone, to open the app offline. */
export const loadMe = () => read(`${PREFIX}.me`, null);
export const saveMe = (judge) => write(`${PREFIX}.me`, judge);

/** S is the judge app's state in memory, shared by its modules. */
export const S = {
  judge: null, // the judge as GET /api/judge answered (or as last kept on the phone)
  groupInfo: { names: [], enabled: false },
  timer: 0, // judging_timer in seconds
  project: null, // the project on screen (judge view)
  reason: null, // why there is no project
  deliberation: false,
  running: null, // clock running, null until known
  outbox: null, // the Outbox (queue.js)
  socketUp: false,
  view: 'judge',
  busy: false,
};
