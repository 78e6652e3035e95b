/**
 * `GET /api/v1|v2/solver_competition/{id}` over a real database: every id up to 2^63−1 that holds no competition
 * is 404 `NotFound` (issue 19: ids beyond JavaScript's safe integers used to reach the database as rounded
 * numbers and answer 500), and a malformed id is 400.
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
import { registerAuctionRoutes } from './auction-routes.js';

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
