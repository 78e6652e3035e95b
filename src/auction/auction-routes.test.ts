/**
 * `GET /api/v1|v2/solver_competition/{id}` over a real database: every id up to 2^63−1 that holds no competition
 * is 404 `NotFound` (issue 19: ids beyond JavaScript's safe integers used to reach the database as rounded
 * numbers and answer 500), and a malformed id is 400. `GET /api/v1/auction` serves the auction stored
 * gzip-compressed as it is to a client that accepts gzip, unpacked to one that does not (issue 24), and a row
 * stored as text before migration 021 as text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { engines } from '../../test/fixtures/databases.js';
import { call } from '../../test/fixtures/orders.js';
import type { Database } from '../db/connection.js';
import { buildHttpServer, type HttpServer } from '../http/server.js';
import { AuctionStore } from './auction-store.js';
import { CompetitionStore } from './competition-store.js';
import { acceptsGzip, registerAuctionRoutes } from './auction-routes.js';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';

/** A GET with exactly these headers (fetch would add its own Accept-Encoding and unpack the body). */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}


for (const engine of await engines()) {
  describe(`solver competition ids on ${engine.engine}`, { skip: engine.skip }, () => {
    let database: Database & { dispose(): Promise<void> };
    let server: HttpServer;
    let base: string;
    before(async () => {
      database = await engine.open();
      server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
      registerAuctionRoutes(server, { auctions: new AuctionStore(database.db, 31337), competitions: new CompetitionStore(database.db, 31337) });
      await server.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    it('serves the current auction compressed as stored to a gzip client, unpacked to others, and an old text row as text', async () => {
      const store = new AuctionStore(database.db, 31337);
      // a row stored as text before migration 021
      await database.db.insertInto('auctions').values({ chain_id: 31337, id: 7, block: 3, auction: JSON.stringify({ id: 7, block: 3, orders: [], prices: {} }), auction_gzip: null }).execute();
      const old = await rawGet(base, '/api/v1/auction', { 'accept-encoding': 'gzip' });
      assert.equal(old.status, 200);
      assert.equal(old.headers['content-encoding'], undefined);
      assert.deepEqual(JSON.parse(old.body.toString()), { id: 7, block: 3, orders: [], prices: {} });

      const saved = await store.save({ chainId: 31337, block: 4, timestamp: 1, orders: [], prices: new Map([['0x' + '11'.repeat(20), 10n ** 18n]]) as never, settlement: `0x${'9'.repeat(40)}` });
      assert.ok(saved.id > 7, 'above the old row');
      const expected = await store.current();
      assert.equal(expected?.id, saved.id);
      assert.equal(expected?.block, 4);

      const zipped = await rawGet(base, '/api/v1/auction', { 'accept-encoding': 'gzip, deflate' });
      assert.equal(zipped.status, 200);
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.match(String(zipped.headers['vary']), /accept-encoding/i);
      assert.match(String(zipped.headers['content-type']), /^application\/json/);
      assert.deepEqual(JSON.parse(gunzipSync(zipped.body).toString()), expected);

      for (const headers of [{}, { 'accept-encoding': 'gzip;q=0, identity' }] as Array<Record<string, string>>) {
        const plain = await rawGet(base, '/api/v1/auction', headers);
        assert.equal(plain.status, 200);
        assert.equal(plain.headers['content-encoding'], undefined, JSON.stringify(headers));
        assert.deepEqual(JSON.parse(plain.body.toString()), expected);
      }
      // what the SDK's fetch sees
      const fetched = await fetch(`${base}/api/v1/auction`);
      assert.deepEqual(await fetched.json(), expected);
      assert.deepEqual((await database.db.selectFrom('auctions').select('id').where('chain_id', '=', 31337).execute()).map((r) => Number(r.id)), [saved.id], 'only the current one is kept');
    });

    it('answers 404 NotFound for every absent id up to 2^63−1 (and beyond), v1 and v2', async () => {
      const ids = ['0', '1', '9007199254740991', '9007199254740992', '9007199254740993', '4611686018427387904', '9223372036854775806', '9223372036854775807', '9223372036854775808', '99999999999999999999'];
      for (const version of ['v1', 'v2']) {
        for (const id of ids) {
          const res = await call(base, 'GET', `/api/${version}/solver_competition/${id}`);
          assert.equal(res.status, 404, `${version} ${id}: ${JSON.stringify(res.body)}`);
          assert.equal(res.body.errorType, 'NotFound');
        }
        assert.equal((await call(base, 'GET', `/api/${version}/solver_competition/-1`)).status, 400);
      }
    });
  });
}

describe('acceptsGzip', () => {
  it('reads Accept-Encoding as HTTP does', () => {
    for (const yes of ['gzip', 'gzip, deflate, br', 'br;q=1.0, GZIP;q=0.5', '*', 'deflate, *;q=0.1', 'x-gzip']) assert.equal(acceptsGzip(yes), true, yes);
    for (const no of [undefined, '', 'identity', 'br, deflate', 'gzip;q=0', 'gzip;q=0.0, *', '*;q=0', 'gzipx']) assert.equal(acceptsGzip(no), false, String(no));
  });
});
