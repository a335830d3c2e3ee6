// Walks Jury's own web client (hackutd/jury client/, built with VITE_JURY_URL at a
// Podium's /api) in headless Chromium, as an organiser and as judges, and writes a
// screenshot per screen plus a log of every alert, page error and failed API call.
//
//   BASE=http://127.0.0.1:18091 PASSWORD=... node walk.mjs [admin|judge|reset|all]
//
// Not part of Podium's CI: it needs Jury's client fetched and built (docs/jury-client.md).
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

const BASE = process.env.BASE || 'http://127.0.0.1:18091';
const PASSWORD = process.env.PASSWORD || 'walk-admin-pw';
const OUT = process.env.OUT || path.resolve('shots');
const DATA = process.env.DATA || path.resolve('data');
const PHASES = (process.argv[2] || 'all').split(',');
fs.mkdirSync(OUT, { recursive: true });

const findings = []; // {screen, kind, text}
let screen = 'start';
const note = (kind, text) => {
  findings.push({ screen, kind, text });
  console.log(`[${screen}] ${kind}: ${text}`);
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-quic', '--no-first-run'],
});

async function newPage(viewport = { width: 1280, height: 900 }) {
  const ctx = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await ctx.newPage();
  page.on('dialog', async (d) => { note('alert', d.message()); await d.accept(); });
  page.on('pageerror', (e) => note('page error', e.message));
  page.on('console', (m) => { if (m.type() === 'error') note('console error', m.text().slice(0, 300)); });
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/api') && r.status() >= 400) {
      let body = '';
      try { body = (await r.text()).slice(0, 200); } catch { /* ignore */ }
      note('http', `${r.request().method()} ${u.pathname} -> ${r.status()} ${body}`);
    }
  });
  return page;
}

async function shot(page, name) {
  screen = name;
  await page.waitForTimeout(700);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  console.log(`-- screenshot ${name}.png at ${new URL(page.url()).pathname}`);
}

async function api(method, p, body) {
  const headers = { Authorization: 'Basic ' + Buffer.from('admin:' + PASSWORD).toString('base64') };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(BASE + '/api' + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  try { return { status: r.status, data: JSON.parse(text) }; } catch { return { status: r.status, data: text }; }
}

const byLabel = (page, label) => page.locator(`[id="${label}"]`);
const button = (page, name) => page.getByRole('button', { name, exact: true });

// ---------------------------------------------------------------- organiser
async function adminLogin(page) {
  screen = 'admin-login';
  await page.goto(BASE + '/admin/login');
  await page.locator('input').first().fill('definitely-wrong');
  await page.keyboard.press('Enter');
  await page.waitForTimeout(800);
  await shot(page, 'admin-login-wrong');
  const txt = await page.locator('body').innerText();
  if (!txt.includes('Invalid admin password')) note('check', 'wrong password: no "Invalid admin password" shown');
  await page.locator('input').first().fill(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL('**/admin', { timeout: 5000 });
}

async function uploadCSV(page, format, file, header) {
  // The file input of this form is #dropzone-file-<format>.
  await page.locator(`#dropzone-file-${format}`).setInputFiles(path.join(DATA, file));
  const form = page.locator('div', { has: page.locator(`#dropzone-file-${format}`) }).last();
  if (header) {
    await page.locator('div', { hasText: /^CSV contains a header row$/ }).locator('input[type=checkbox]').nth(format === 'devpost' ? 0 : 0).click();
  }
  await form.page().getByRole('button', { name: 'Upload' }).first().click();
  await page.waitForTimeout(1200);
}

async function organiser() {
  const page = await newPage();
  await adminLogin(page);
  await shot(page, 'admin-dashboard-empty');

  // Add projects: form, CSV with a header row, Devpost CSV.
  await page.goto(BASE + '/admin/add-projects');
  await page.waitForTimeout(800);
  await shot(page, 'admin-add-projects');
  await page.getByPlaceholder('Name', { exact: true }).fill('Typed Project');
  await page.getByPlaceholder('Description', { exact: true }).fill('Added through the form');
  await page.getByPlaceholder('URL', { exact: true }).fill('github.com/team/typed');
  await page.getByPlaceholder('Challenge List (comma separated, optional)').fill('AI, Web');
  await button(page, 'Add').click();
  await page.waitForTimeout(1000);
  await shot(page, 'admin-add-projects-form');
  // Projects CSV (the second upload form; the first is Devpost's), with a header row.
  await page.locator('#dropzone-file-project').setInputFiles(path.join(DATA, 'projects.csv'));
  await page.waitForTimeout(500);
  await shot(page, 'admin-add-projects-csv-chosen');
  await page.getByText('CSV contains a header row', { exact: true }).last().click();
  await button(page, 'Upload').last().click();
  await page.waitForTimeout(1500);
  await shot(page, 'admin-add-projects-csv');
  await page.locator('#dropzone-file-devpost').setInputFiles(path.join(DATA, 'devpost.csv'));
  await page.waitForTimeout(500);
  await button(page, 'Upload').first().click();
  await page.waitForTimeout(1500);
  await shot(page, 'admin-add-projects-devpost');
  const projects = (await api('GET', '/project/list')).data;
  console.log('projects:', projects.map((p) => `${p.location} ${p.name} ${p.url} ${p.try_link} ${p.video_link}`).join(' | '));

  // Add judges: form and CSV.
  screen = 'admin-add-judges';
  await page.goto(BASE + '/admin/add-judges');
  await page.waitForTimeout(800);
  await page.getByPlaceholder('Name', { exact: true }).fill('Ada Lovelace');
  await page.getByPlaceholder('Email', { exact: true }).fill('ada@example.com');
  await page.getByText('Do not send an email', { exact: true }).first().click();
  await button(page, 'Add').click();
  await page.waitForTimeout(1000);
  await shot(page, 'admin-add-judges-form');
  await page.locator('#dropzone-file-judge').setInputFiles(path.join(DATA, 'judges.csv'));
  await page.waitForTimeout(300);
  await page.getByText('Do not send an email', { exact: true }).last().click();
  await page.getByText('CSV contains a header row', { exact: true }).last().click();
  await button(page, 'Upload').first().click();
  await page.waitForTimeout(1500);
  await shot(page, 'admin-add-judges');
  const judges = (await api('GET', '/judge/list')).data;
  console.log('judges:', judges.map((j) => `${j.name} <${j.email}> ${j.code}`).join(' | '));

  // Dashboard with data; start the clock from the UI.
  await page.goto(BASE + '/admin');
  await page.waitForTimeout(1500);
  await shot(page, 'admin-dashboard');
  await page.close();
  return { projects, judges };
}


// ---------------------------------------------------------------- judge
async function judgeLogin(page, code) {
  screen = 'judge-login';
  await page.goto(BASE + '/judge/login');
  await page.locator('input').first().fill('99999999');
  await page.keyboard.press('Enter');
  await page.waitForTimeout(800);
  await shot(page, 'judge-login-wrong');
  if (!(await page.locator('body').innerText()).includes('Invalid judging code')) note('check', 'wrong code: no "Invalid judging code" shown');
  await page.locator('input').first().fill(code);
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/judge(\/welcome)?$/, { timeout: 5000 });
  await page.waitForTimeout(1000);
}

async function welcome(page) {
  await page.waitForURL('**/judge/welcome', { timeout: 5000 });
  await shot(page, 'judge-welcome');
  for (const t of ['Before you continue', 'I certify that my email', 'I am judging for the']) {
    await page.getByText(t, { exact: false }).first().click();
  }
  await button(page, 'Continue').click();
  await page.waitForURL(/\/judge$/, { timeout: 5000 });
  await page.waitForTimeout(1000);
}

// liveProject opens the live page and returns the project name shown.
async function openLive(page, name) {
  await page.getByText(/^(Next Project|Resume Project)$/).click();
  await page.waitForURL('**/judge/live', { timeout: 5000 });
  await page.waitForTimeout(1500);
  await shot(page, name);
  return (await page.locator('h1, h2, h3').allInnerTexts()).join(' / ');
}

async function startAndFinish(page, { star, notes, shotName }) {
  const start = button(page, 'Start Judging');
  if (await start.count()) await start.click();
  await page.waitForTimeout(500);
  await button(page, 'Done').click();
  await page.waitForTimeout(500);
  if (star) await page.locator('button:has(svg)').filter({ hasNot: page.locator('text=Submit') }).first().click();
  if (notes) await page.getByPlaceholder('Type any personal comments here').fill(notes);
  if (shotName) await shot(page, shotName);
  await button(page, 'Submit').click();
  await page.waitForURL(/\/judge$/, { timeout: 5000 });
  await page.waitForTimeout(1200);
}

async function flagCurrent(page, title, which, shotName) {
  await button(page, which).click();
  await page.waitForTimeout(400);
  await page.getByText(title, { exact: true }).click();
  await shot(page, shotName);
  await button(page, 'Submit').click();
  await page.waitForTimeout(1500);
}

async function dragToRanked(page, projectName, targetIndex) {
  const zones = page.locator('div.min-h-16');
  const item = page.locator('div.flex.items-center.cursor-default', { hasText: projectName });
  const handle = item.locator('div.drag-handle');
  const hb = await handle.boundingBox();
  const rankedZone = zones.nth(0);
  const rankedItems = rankedZone.locator('div.flex.items-center.cursor-default');
  const n = await rankedItems.count();
  let target;
  if (n === 0) {
    const zb = await rankedZone.boundingBox();
    target = { x: zb.x + zb.width / 2, y: zb.y + zb.height / 2 };
  } else {
    const ib = await rankedItems.nth(Math.min(targetIndex, n - 1)).boundingBox();
    target = { x: ib.x + ib.width / 2, y: targetIndex >= n ? ib.y + ib.height - 4 : ib.y + 4 };
  }
  await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
  await page.mouse.down();
  await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2 - 10, { steps: 3 });
  await page.mouse.move(target.x, target.y, { steps: 15 });
  await page.waitForTimeout(300);
  await page.mouse.move(target.x, target.y + 1, { steps: 2 });
  await page.mouse.up();
  await page.waitForTimeout(1200);
}

async function judgeMe() {
  const judges = (await api('GET', '/judge/list')).data;
  const ada = judges.find((j) => j.email === 'ada@example.com') || judges[0];

  // The organiser starts the clock from the dashboard.
  const admin = await newPage();
  await adminLogin(admin);
  await admin.waitForTimeout(800);
  const startBtn = button(admin, 'Start Judging');
  if (await startBtn.count()) await startBtn.click();
  await admin.waitForTimeout(1500);
  await shot(admin, 'admin-dashboard-running');

  const page = await newPage({ width: 420, height: 900 }); // a phone
  // The phone still holds an HttpOnly "token" cookie from an older Podium (the cookie that
  // stopped Jury's client from storing its own): logging in must clear it.
  await page.context().addCookies([{ name: 'token', value: 'stale-session', url: BASE, httpOnly: true, sameSite: 'Lax' }]);
  await judgeLogin(page, ada.code);
  await welcome(page);
  await shot(page, 'judge-home-empty');

  // Project 1: judged, starred, notes.
  console.log('live 1:', await openLive(page, 'judge-live-1'));
  await startAndFinish(page, { star: true, notes: 'great demo', shotName: 'judge-finish-popup' });
  await shot(page, 'judge-home-1');

  // Project 2: flagged (cannot demo) from the live page; the next one comes up at once.
  console.log('live 2:', await openLive(page, 'judge-live-2'));
  await flagCurrent(page, 'Cannot Demo Project', 'Flag', 'judge-flag-popup');
  await shot(page, 'judge-live-after-flag');
  await startAndFinish(page, { notes: 'ok' });

  // Project 3 (skip busy first, then judge the next one).
  console.log('live 3:', await openLive(page, 'judge-live-3'));
  await flagCurrent(page, 'Busy', 'Skip', 'judge-skip-popup');
  await startAndFinish(page, { star: false, notes: 'third' });
  // Project 4.
  await openLive(page, 'judge-live-4');
  await startAndFinish(page, { notes: 'fourth' });
  await shot(page, 'judge-home-judged');

  const me = async () => (await fetch(BASE + '/api/judge', { headers: { Authorization: 'Bearer ' + (await page.context().cookies()).find((c) => c.name === 'token').value } })).json();
  let j = await me();
  console.log('judge after 4:', JSON.stringify({ seen: j.seen_projects.map((p) => [p.name, p.starred, p.notes]), flagged: j.flagged, rankings: j.rankings }));
  const statSeen = await page.locator('body').innerText();
  console.log('home text:', statSeen.replace(/\s+/g, ' ').slice(0, 400));

  // Ranking by drag and drop: three projects into the ranked list.
  const names = j.seen_projects.map((p) => p.name);
  await dragToRanked(page, names[0], 0);
  await shot(page, 'judge-rank-1');
  await dragToRanked(page, names[2], 1);
  await dragToRanked(page, names[1], 0);
  await shot(page, 'judge-ranked');
  j = await me();
  console.log('rankings:', j.rankings.map((id) => j.seen_projects.find((p) => p.project_id === id)?.name));
  // Reorder within the ranked list: move the last to the top.
  const last = j.seen_projects.find((p) => p.project_id === j.rankings[j.rankings.length - 1]).name;
  await dragToRanked(page, last, 0);
  j = await me();
  console.log('rankings after reorder:', j.rankings.map((id) => j.seen_projects.find((p) => p.project_id === id)?.name));
  await page.reload();
  await page.waitForTimeout(1500);
  await shot(page, 'judge-ranked-reloaded');

  // Stars from the home list (PUT /judge/star/:id).
  const firstItem = page.locator('div.flex.items-center.cursor-default').first();
  await firstItem.locator('button').first().click();
  await page.waitForTimeout(800);
  j = await me();
  console.log('stars after home toggle:', j.seen_projects.map((p) => [p.name, p.starred]));

  // Project page: title link, star (PUT /judge/star {project, starred}) and notes.
  const target = j.seen_projects[0];
  await page.goto(BASE + '/judge/project/' + target.project_id);
  await page.waitForTimeout(1500);
  await shot(page, 'judge-project-page');
  const href = await page.locator('h1 a').getAttribute('href');
  console.log('project page title link:', href);
  await page.locator('button:has(svg)').first().click();
  await page.getByPlaceholder('Personal Notes').fill('edited on the project page');
  await page.waitForTimeout(2000);
  await shot(page, 'judge-project-page-edited');
  j = await me();
  const after = j.seen_projects.find((p) => p.project_id === target.project_id);
  console.log('after project page:', JSON.stringify([after.name, target.starred, '->', after.starred, after.notes]));
  if (after.starred === target.starred) note('check', 'project page star did not change the star');
  if (after.notes !== 'edited on the project page') note('check', 'project page notes not saved');

  // Back on home: stats (seen counts seen + flagged).
  await page.goto(BASE + '/judge');
  await page.waitForTimeout(1500);
  await shot(page, 'judge-home-final');

  // Deliberation from the organiser's Actions popup: the judge's ranking and stars lock.
  screen = 'deliberation';
  await admin.goto(BASE + '/admin');
  await admin.waitForTimeout(1200);
  await button(admin, 'Actions').click();
  await admin.waitForTimeout(500);
  await button(admin, 'Start Deliberation').click();
  await admin.waitForTimeout(400);
  await button(admin, 'Confirm').click();
  await admin.waitForTimeout(800);
  if (!(await api('GET', '/admin/options')).data.deliberation) note('check', 'Start Deliberation did not start it');
  await page.goto(BASE + '/judge');
  await page.waitForTimeout(1500);
  await shot(page, 'judge-home-deliberation');
  const starRes = await fetch(BASE + '/api/judge/star', { method: 'PUT', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + (await page.context().cookies()).find((c) => c.name === 'token').value }, body: JSON.stringify({ project: target.project_id, starred: true }) });
  console.log('star during deliberation:', starRes.status, await starRes.text());
  await admin.goto(BASE + '/admin');
  await admin.waitForTimeout(1200);
  await button(admin, 'Actions').click();
  await admin.waitForTimeout(500);
  await button(admin, 'End Deliberation').click();
  await admin.waitForTimeout(400);
  await button(admin, 'Confirm').click();
  await admin.waitForTimeout(800);
  if ((await api('GET', '/admin/options')).data.deliberation) note('check', 'End Deliberation did not end it');

  // Logout (Jury's client drops its own token cookie): the judge is sent to the login page.
  screen = 'judge-logout';
  await page.getByText('Logout', { exact: true }).click();
  await page.waitForTimeout(800);
  await page.goto(BASE + '/judge');
  await page.waitForTimeout(1500);
  await shot(page, 'judge-after-logout');
  if (!new URL(page.url()).pathname.startsWith('/judge/login')) note('check', `after logout /judge stayed at ${page.url()}`);

  // Organiser view after judging.
  await admin.goto(BASE + '/admin');
  await admin.waitForTimeout(1500);
  await shot(admin, 'admin-dashboard-after-judging');
  await button(admin, 'Judges').click();
  await admin.waitForTimeout(1000);
  await shot(admin, 'admin-dashboard-judges');
  await admin.goto(BASE + '/admin/log');
  await admin.waitForTimeout(1000);
  await shot(admin, 'admin-log');
  await page.close();
  await admin.close();
}


// ---------------------------------------------------------------- settings
async function fillAndClick(page, label, value, buttonText) {
  await page.locator(`[id="${label}"]`).fill(String(value));
  await button(page, buttonText).click();
  await page.waitForTimeout(700);
}

async function confirm(page, openText, submitText, nth = 0) {
  await button(page, openText).nth(nth).click();
  await page.waitForTimeout(400);
  await button(page, submitText).last().click();
  await page.waitForTimeout(900);
}

async function settings() {
  const page = await newPage();
  await adminLogin(page);
  // Pause the clock from the dashboard (settings that change groups need it paused).
  await page.waitForTimeout(1500); // the dashboard loads the clock
  const pause = button(page, 'Pause Judging');
  if (await pause.count()) { await pause.click(); await page.waitForTimeout(800); }
  if ((await api('GET', '/admin/clock')).data.running) note('check', 'clock still running after Pause Judging');
  await page.goto(BASE + '/admin/settings');
  await page.waitForTimeout(1500);
  await shot(page, 'admin-settings');
  const before = (await api('GET', '/admin/options')).data;

  screen = 'settings-login';
  await button(page, 'Disable Logins').click();
  await page.waitForTimeout(700);
  if (!(await api('GET', '/admin/options')).data.block_reqs) note('check', 'Disable Logins did not set block_reqs');
  await button(page, 'Enable Logins').click();
  await page.waitForTimeout(700);
  await fillAndClick(page, 'Max Logins Per Minute', 250, 'Update Max Requests');

  screen = 'settings-params';
  await confirm(page, 'Reassign', 'Reassign', 0); // project numbers
  await confirm(page, 'Reassign', 'Reassign', 1); // judge groups
  await fillAndClick(page, 'Minimum Views', 4, 'Update Min Views');
  await fillAndClick(page, 'Tracks to Ignore', 'Sponsor Prize', 'Update Ignore Tracks');

  screen = 'settings-clock';
  await page.locator('p.inline', { hasText: 'Sync automatically' }).click();
  await page.waitForTimeout(600);
  await button(page, 'Backup').click();
  await page.waitForTimeout(600);
  await fillAndClick(page, 'Judging Timer (MM:SS)', '04:30', 'Update Timer');
  await confirm(page, 'Reset', 'Reset', 0); // main clock
  await shot(page, 'admin-settings-after-clock');

  screen = 'settings-tracks';
  await page.locator('p.inline', { hasText: 'Enable Track Judging' }).click();
  await page.waitForTimeout(800);
  await fillAndClick(page, 'List of Tracks', 'AI, Web', 'Update Tracks');
  await fillAndClick(page, 'Track min views', '2, 3', 'Update Track Min Views');
  await shot(page, 'admin-settings-tracks');

  screen = 'settings-groups';
  await page.locator('p.inline', { hasText: 'Enable Multi-Group Judging' }).click();
  await page.waitForTimeout(900);
  await fillAndClick(page, 'Number of Groups', 2, 'Update Number of Groups');
  await fillAndClick(page, 'Group Sizes', '3, 3', 'Update Sizes');
  await button(page, 'manual').click();
  await page.waitForTimeout(700);
  await button(page, 'auto').click();
  await page.waitForTimeout(700);
  await fillAndClick(page, 'Auto Switch Proportions', 0.5, 'Update Proportion');
  await fillAndClick(page, 'Group Names', 'Hall A, Hall B', 'Update Group Names');
  await shot(page, 'admin-settings-groups');

  screen = 'settings-export';
  for (const [label, file] of [['Export Judges', 'judges'], ['Export Projects', 'projects'], ['Export by Challenges', 'challenges'], ['Export Rankings', 'rankings']]) {
    const dl = page.waitForEvent('download', { timeout: 5000 }).catch(() => null);
    await button(page, label).click();
    const d = await dl;
    if (!d) { note('check', `${label}: no download`); continue; }
    const to = path.join(OUT, `export-${file}-${d.suggestedFilename()}`);
    await d.saveAs(to);
    console.log(`${label}: ${d.suggestedFilename()} ${fs.statSync(to).size} bytes`);
  }
  const after = (await api('GET', '/admin/options')).data;
  const keys = ['max_req_per_min', 'block_reqs', 'min_views', 'ignore_tracks', 'clock_sync', 'judging_timer', 'judge_tracks', 'tracks', 'track_views', 'multi_group', 'num_groups', 'group_sizes', 'switching_mode', 'auto_switch_prop', 'group_names'];
  for (const k of keys) console.log(`option ${k}: ${JSON.stringify(before[k])} -> ${JSON.stringify(after[k])}`);
  await page.reload();
  await page.waitForTimeout(1500);
  await shot(page, 'admin-settings-reloaded');

  // Track judging off again so the second judge is a general one; clock on.
  await page.locator('p.inline', { hasText: 'Enable Track Judging' }).click();
  await page.waitForTimeout(800);
  await page.goto(BASE + '/admin');
  await page.waitForTimeout(1000);
  const start = page.getByRole('button', { name: /^(Start|Resume) Judging$/ });
  if (await start.count()) { await start.click(); await page.waitForTimeout(800); }

  // A second judge sees the group name on the live page (multi-group on).
  const judges = (await api('GET', '/judge/list')).data;
  const grace = judges.find((j) => j.email === 'grace@example.com');
  const jp = await newPage({ width: 420, height: 900 });
  await judgeLogin(jp, grace.code);
  await welcome(jp);
  console.log('grace live:', await openLive(jp, 'judge2-live-groups'));
  await jp.close();

  // Other organiser screens: QR, log, expo, flags.
  await page.goto(BASE + '/admin/qr');
  await page.waitForTimeout(1200);
  await shot(page, 'admin-qr');
  await page.goto(BASE + '/expo');
  await page.waitForTimeout(1200);
  await shot(page, 'expo');
  await page.goto(BASE + '/admin');
  await page.waitForTimeout(1000);
  await button(page, 'See All Flags').click();
  await page.waitForTimeout(800);
  await shot(page, 'admin-flags');
  await page.close();
}

// ---------------------------------------------------------------- reset from the UI
async function resetAll() {
  const page = await newPage();
  await adminLogin(page);
  await page.waitForTimeout(1500); // the dashboard loads the clock
  const pause = button(page, 'Pause Judging');
  if (await pause.count()) { await pause.click(); await page.waitForTimeout(800); }
  if ((await api('GET', '/admin/clock')).data.running) note('check', 'clock still running after Pause Judging');
  await page.goto(BASE + '/admin/settings');
  await page.waitForTimeout(1500);
  const count = async () => {
    const j = (await api('GET', '/judge/list')).data;
    const p = (await api('GET', '/project/list')).data;
    return { judges: j.length, projects: p.length, rankings: j.reduce((n, x) => n + x.rankings.length, 0), seen: j.reduce((n, x) => n + x.seen_projects.length, 0), flagged: j.reduce((n, x) => n + x.flagged.length, 0), flags: (await api('GET', '/admin/flags')).data.length };
  };
  console.log('before resets:', JSON.stringify(await count()));
  for (const [label, name] of [['Delete Rankings', 'rankings'], ['Delete Judging Data', 'judging-data'], ['Delete Projects', 'projects'], ['Delete Judges', 'judges'], ['Drop Database', 'all']]) {
    screen = 'reset-' + name;
    await confirm(page, label, 'RESET DATA');
    console.log(`after ${label}:`, JSON.stringify(await count()));
  }
  await page.reload();
  await page.waitForTimeout(1200);
  await shot(page, 'admin-settings-after-drop');
  await page.goto(BASE + '/admin');
  await page.waitForTimeout(1200);
  await shot(page, 'admin-dashboard-after-drop');
  await page.close();
}

// ---------------------------------------------------------------- main
const results = {};
try {
  if (PHASES.includes('admin') || PHASES.includes('all')) results.org = await organiser();
  if (PHASES.includes('judge') || PHASES.includes('all')) await judgeMe();
  if (PHASES.includes('settings') || PHASES.includes('all')) await settings();
  if (PHASES.includes('reset') || PHASES.includes('all')) await resetAll();
} catch (e) {
  note('walk failed', e.stack || String(e));
} finally {
  fs.writeFileSync(path.join(OUT, 'findings.json'), JSON.stringify(findings, null, 2));
  await browser.close();
}
