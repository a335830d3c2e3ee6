// Serves Jury's built client (vite build output) and forwards /api to Podium, so the
// client and the API share one origin (Podium's CORS stays off).
//
//   node serve.mjs <build dir> [listen port, default 18091] [Podium URL, default http://127.0.0.1:8080]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const dir = path.resolve(process.argv[2] || 'build');
const port = Number(process.argv[3] || 18091);
const backend = new URL(process.argv[4] || 'http://127.0.0.1:8080');
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.mp3': 'audio/mpeg', '.json': 'application/json' };

http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
    const up = http.request({ host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers: { ...req.headers, host: backend.host } }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', (e) => { res.writeHead(502); res.end(JSON.stringify({ error: 'podium unreachable: ' + e.message })); });
    req.pipe(up);
    return;
  }
  let file = path.join(dir, path.normalize(decodeURIComponent(url.pathname)));
  if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(dir, 'index.html'); // single-page app
  res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
}).listen(port, '127.0.0.1', () => console.log(`Jury client from ${dir} on http://127.0.0.1:${port}, /api -> ${backend.origin}`));
