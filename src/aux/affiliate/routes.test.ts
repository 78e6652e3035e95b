/**
 * The integration gate: with CMS_ENABLED=false every affiliate route still exists (and stays in the OpenAPI
 * document) but answers 503 `{message}` naming the variable.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { loadConfig } from '../../config/config.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { buildHttpServer, type HttpServer } from '../../http/server.js';
import { buildAffiliateProgram, registerAffiliateRoutes } from './index.js';

describe('affiliate routes behind CMS_ENABLED', () => {
  let database: Database;
  let server: HttpServer;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    const config = loadConfig({ CMS_ENABLED: 'false' });
    server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    const program = buildAffiliateProgram({ config, db: database.db, chains: [], logger: { warn: () => {} } });
    registerAffiliateRoutes(server, { service: program.service, enabled: config.cms.enabled });
    await server.ready();
  });
  after(async () => {
    await server?.close();
    await database?.close();
  });

  it('answers 503 {message} naming CMS_ENABLED on every route, and documents them', async () => {
    const wallet = '0x' + '11'.repeat(20);
    const requests = [
      { method: 'POST' as const, url: `/affiliate/${wallet}`, payload: { walletAddress: wallet, code: 'ABCDE', signedMessage: '0x00' } },
      { method: 'GET' as const, url: `/affiliate/${wallet}` },
      { method: 'GET' as const, url: `/affiliate/affiliate-stats/${wallet}` },
      { method: 'GET' as const, url: `/affiliate/trader-stats/${wallet}` },
      { method: 'GET' as const, url: '/ref-codes/ABCDE' },
    ];
    for (const request of requests) {
      const res = await server.inject(request);
      assert.equal(res.statusCode, 503, request.url);
      assert.match(res.json().message, /CMS_ENABLED/);
    }
    const doc = (await server.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, unknown> };
    for (const path of ['/affiliate/{address}', '/affiliate/affiliate-stats/{address}', '/affiliate/trader-stats/{address}', '/ref-codes/{code}']) assert.ok(doc.paths[path], path);
  });
});
