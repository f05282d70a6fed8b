// The HTTP server of a test host (test/netHost.ts), run by plain node inside the test's network
// namespace: `ip netns exec NS node test/netHostServer.mjs PORT...`. It listens on 0.0.0.0 on each
// port and answers every request with JSON naming what it received:
//   {"host": <Host header>, "path": <path and query>, "method", "localAddress", "localPort"}
// with "authorization" (the header) and "body" (as text) when the request has them,
// and `/redirect?to=URL` with a 302 to URL (same JSON body). A port given as `tls:PORT` serves
// HTTPS with the PEM key and certificate in NETHOST_TLS_KEY and NETHOST_TLS_CERT. It prints
// `ready <pid>` once every port listens, and exits when its stdin closes (the test process is
// gone) or on SIGTERM.
import * as http from 'node:http';
import * as https from 'node:https';

const specs = process.argv.slice(2).map((arg) => ({ tls: arg.startsWith('tls:'), port: Number(arg.replace(/^tls:/, '')) }));
if (specs.length === 0 || specs.some(({ port: p }) => !Number.isInteger(p) || p <= 0 || p > 65535)) {
  process.stderr.write('usage: netHostServer.mjs [tls:]PORT...\n');
  process.exit(2);
}

function handle(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => answer(req, res, Buffer.concat(chunks).toString('utf8')));
}

function answer(req, res, received) {
  const url = new URL(req.url ?? '/', 'http://placeholder');
  const body = JSON.stringify({
    host: req.headers.host ?? null,
    path: req.url ?? '/',
    method: req.method,
    localAddress: req.socket.localAddress,
    localPort: req.socket.localPort,
    ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
    ...(received !== '' ? { body: received } : {}),
  });
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' };
  if (url.pathname === '/redirect' && url.searchParams.has('to')) {
    res.writeHead(302, { ...headers, location: url.searchParams.get('to') });
  } else {
    res.writeHead(200, headers);
  }
  res.end(body);
}

const servers = [];
let listening = 0;
for (const { tls, port } of specs) {
  const server = tls ? https.createServer({ key: process.env.NETHOST_TLS_KEY, cert: process.env.NETHOST_TLS_CERT }, handle) : http.createServer(handle);
  server.on('error', (err) => {
    process.stderr.write(`netHostServer: port ${port}: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(port, '0.0.0.0', () => {
    listening += 1;
    if (listening === specs.length) process.stdout.write(`ready ${process.pid}\n`);
  });
  servers.push(server);
}

const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
