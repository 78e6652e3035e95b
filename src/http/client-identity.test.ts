import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildHttpServer, type HttpServer } from './server.js';
import { clientKey, parseTrustProxy, type TrustProxy } from './client-identity.js';

describe('clientKey and TRUST_PROXY parsing', () => {
  it('keys IPv4 as is and IPv6 by its /64', () => {
    assert.equal(clientKey('10.1.2.3'), '10.1.2.3');
    assert.equal(clientKey('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(clientKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:0db8:0001:0002:0000::1'), '2001:db8:1:2::/64');
    assert.equal(clientKey('::1'), '0:0:0:0::/64');
    assert.notEqual(clientKey('2001:db8:1:3::1'), clientKey('2001:db8:1:2::1'));
  });
  it('parses hop counts and CIDR lists, refuses anything else', () => {
    assert.equal(parseTrustProxy(null), false);
    assert.equal(parseTrustProxy('0'), false);
    assert.equal(parseTrustProxy('2'), 2);
    assert.deepEqual(parseTrustProxy('127.0.0.1/32, 10.0.0.0/8,::1'), ['127.0.0.1/32', '10.0.0.0/8', '::1']);
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0/8', '1.2.3.4/8/1', 'fe80::/129', '-1']) assert.equal(parseTrustProxy(bad), null, bad);
  });
});

describe('rate limits key on the real client behind trusted proxies', () => {
  const servers: HttpServer[] = [];
  async function start(trustProxy: TrustProxy): Promise<string> {
    const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 1 }, readiness: [], version: 'test', trustProxy });
    server.get('/who', { config: { api: 'aux' } }, async (req) => ({ ip: req.ip }));
    await server.listen({ host: '127.0.0.1', port: 0 });
    servers.push(server);
    const address = server.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }
  /** four requests at once from `client` (as named by X-Forwarded-For) against a 1/s limit: statuses */
  const burst = (base: string, client: string) =>
    Promise.all(Array.from({ length: 4 }, () => fetch(`${base}/who`, { headers: { 'x-forwarded-for': client } }).then((r) => r.status)));
  const whoIs = async (base: string, client: string) => ((await (await fetch(`${base}/who`, { headers: { 'x-forwarded-for': client } })).json()) as { ip: string }).ip;

  let trusted: string;
  let untrusted: string;
  let oneHop: string;
  before(async () => {
    trusted = await start(['127.0.0.1/32']);
    untrusted = await start(false);
    oneHop = await start(1);
  });
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('a trusted proxy’s X-Forwarded-For names the client; an untrusted one is ignored', async () => {
    assert.equal(await whoIs(trusted, '203.0.113.9'), '203.0.113.9');
    assert.equal(await whoIs(untrusted, '203.0.113.9'), '127.0.0.1');
    assert.equal(await whoIs(oneHop, '10.9.9.9, 203.0.113.9'), '203.0.113.9', 'one trusted hop: the address it forwarded for');
  });

  it('one client over its limit does not limit another client behind the same proxy', async () => {
    const a = await burst(trusted, '198.51.100.1');
    assert.ok(a.includes(429), `a burst of a 1/s client is refused in part: ${a}`);
    const [b] = await burst(trusted, '198.51.100.2');
    assert.equal(b, 200, 'another client behind the same proxy is not limited');
  });

  it('IPv6 clients are keyed by their /64: another address in the same /64 shares the limit', async () => {
    const a = await burst(trusted, '2001:db8:aa:bb::1');
    assert.ok(a.includes(429), String(a));
    const same = await fetch(`${trusted}/who`, { headers: { 'x-forwarded-for': '2001:db8:aa:bb::2' } });
    assert.equal(same.status, 429, 'same /64, same bucket');
  });
});
