// The test host of test/netHost.ts: a server on a real, non-loopback address in a network
// namespace of its own, reachable by name from the root namespace, and nothing left after stop().
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { requireTestHost, startTestHost, type TestHost } from './netHost';

function get(url: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
        } catch (err) {
          reject(err as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('test host in a network namespace (test/netHost.ts)', function () {
  let host: TestHost | undefined;

  before(function () {
    requireTestHost(this);
  });

  after(async function () {
    await host?.stop();
  });

  it('serves by name on non-loopback addresses, redirects, and leaves nothing behind when stopped', async function () {
    host = await startTestHost({ ports: [80, 8080] });
    const { names, addresses, namespace, serverPid } = host;
    assert.match(addresses.allowed, /^10\.253\.\d+\.\d+$/);
    assert.notEqual(addresses.allowed, addresses.other);
    assert.ok(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).includes(namespace));
    assert.ok(fs.readFileSync('/etc/hosts', 'utf8').includes(`${addresses.allowed} ${names.allowed}`));

    const allowed = await get(`http://${names.allowed}/x?y=1`);
    assert.equal(allowed.status, 200);
    assert.equal(allowed.json.host, names.allowed);
    assert.equal(allowed.json.path, '/x?y=1');
    assert.equal(allowed.json.localAddress, addresses.allowed);

    const other = await get(`http://${names.other}:8080/z`);
    assert.equal(other.json.host, `${names.other}:8080`);
    assert.equal(other.json.path, '/z');
    assert.equal(other.json.localAddress, addresses.other);
    assert.equal(other.json.localPort, 8080);

    const target = `http://${names.other}/landed`;
    const redirect = await get(`http://${names.allowed}/redirect?to=${encodeURIComponent(target)}`);
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.location, target);

    const followed = await fetch(`http://${names.allowed}/redirect?to=${encodeURIComponent(target)}`);
    assert.equal(followed.status, 200);
    assert.deepEqual(await followed.json(), { host: names.other, path: '/landed', method: 'GET', localAddress: addresses.other, localPort: 80 });

    await host.stop();
    host = undefined;
    assert.ok(!execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).includes(namespace), 'namespace deleted');
    assert.ok(!isAlive(serverPid), 'server stopped');
    const hosts = fs.readFileSync('/etc/hosts', 'utf8');
    assert.ok(!hosts.includes(namespace) && !hosts.includes(names.allowed), '/etc/hosts block removed');
    assert.ok(!execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' }).includes(addresses.root), 'veth removed');
  });
});
