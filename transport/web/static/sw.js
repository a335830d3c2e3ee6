// Service worker of the judge app (docs/behaviour.md#judge-app): keeps the app shell on
// the phone so the app opens without a network. The server writes the build's id into
// VERSION, so every new build installs a new worker with a new cache and the old one is
// deleted. Only the shell is answered here; API calls go to the network as they are
// (the page keeps its own copies and its queue of actions in localStorage).
const VERSION = '__PODIUM_BUILD__';
const CACHE = `podium-shell-${VERSION}`;
const SHELL = [
  '/',
  '/manifest.webmanifest',
  '/static/app.css',
  '/static/lib.js',
  '/static/judge.js',
  '/static/store.js',
  '/static/queue.js',
  '/static/visit.js',
  '/static/placement.js',
  '/static/ranking.js',
  '/static/icon.svg',
  '/static/icon-192.png',
];

self.addEventListener('install', (ev) => {
  ev.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // cache: 'reload' skips the HTTP cache: the shell is this build's files.
    await cache.addAll(SHELL.map((u) => new Request(u, { cache: 'reload' })));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (ev) => {
  ev.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('podium-shell-') && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

const judgePage = (path) => path === '/' || path === '/join';

// shellKey names the cached file that answers a request, or null to leave it alone.
function shellKey(req) {
  if (req.method !== 'GET') return null;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return null;
  if (req.mode === 'navigate') return judgePage(url.pathname) ? '/' : null;
  return SHELL.includes(url.pathname) && !url.search ? url.pathname : null;
}

self.addEventListener('fetch', (ev) => {
  const key = shellKey(ev.request);
  if (!key) return;
  ev.respondWith((async () => {
    if (ev.request.mode !== 'navigate') {
      // The dashboard and the expo share files with the judge app but come from the
      // network: only the judge page is served from this build's cache, so a page and
      // its files are always of one build.
      const client = ev.clientId ? await self.clients.get(ev.clientId) : null;
      if (!client || !judgePage(new URL(client.url).pathname)) return fetch(ev.request);
    }
    const hit = await caches.match(key, { cacheName: CACHE });
    return hit || fetch(ev.request);
  })());
});
