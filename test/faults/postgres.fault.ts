/**
 * PostgreSQL stopped under a running node (a private PostgreSQL: the shared one is never stopped): requests that
 * need it answer 503 in their API's envelope, /readyz 503 (/healthz 200), and the node serves again once
 * PostgreSQL is back, without a restart. The time from PostgreSQL's return to the first answer from the database
 * is a figure (the bound: 5 s).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canRunPrivate, startPrivatePostgres, type PrivatePostgres } from '../fixtures/private-services.js';
import { startTestApp, type TestApp } from '../fixtures/app.js';
import { call } from '../fixtures/orders.js';
import { waitFor } from '../fixtures/wait-for.js';
import { figure } from './figures.js';

describe('PostgreSQL stopped under a running node', { skip: canRunPrivate('postgres') ? false : 'no initdb/pg_ctl on this machine' }, () => {
  let pgServer: PrivatePostgres;
  let app: TestApp;
  before(async () => {
    pgServer = await startPrivatePostgres();
    app = await startTestApp({ DATABASE_URL: pgServer.url });
  });
  after(async () => {
    await app?.stop();
    await pgServer?.destroy();
  });

  const missingUid = `0x${'ab'.repeat(56)}`;

  it('answers 503 in each API\'s envelope, /readyz 503, and serves again when it returns', async () => {
    assert.equal((await call(app.baseUrl, 'GET', `/api/v1/orders/${missingUid}`)).status, 404);
    await pgServer.stop();

    const down = Date.now();
    const order = await call(app.baseUrl, 'GET', `/api/v1/orders/${missingUid}`);
    figure('postgres_outage.first_503_ms', Date.now() - down);
    assert.equal(order.status, 503, JSON.stringify(order.body));
    assert.equal(order.body.errorType, 'ServiceUnavailable');
    assert.equal(typeof order.body.description, 'string');
    const put = await call(app.baseUrl, 'PUT', '/api/v1/app_data', { fullAppData: '{"during":"outage"}' });
    assert.equal(put.status, 503, JSON.stringify(put.body));
    assert.deepEqual(Object.keys(put.body).sort(), ['description', 'errorType']);
    const aux = await call(app.baseUrl, 'GET', `/accounts/0x${'12'.repeat(20)}/notifications`);
    assert.equal(aux.status, 503, JSON.stringify(aux.body));
    assert.deepEqual(Object.keys(aux.body), ['message']);
    const ready = await call(app.baseUrl, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.checks.database, false);
    assert.equal((await call(app.baseUrl, 'GET', '/healthz')).status, 200, 'alive, only not ready');

    await pgServer.start();
    const back = Date.now();
    await waitFor('the order book to answer from the database again', async () => (await call(app.baseUrl, 'GET', `/api/v1/orders/${missingUid}`)).status === 404, 60_000, 100);
    figure('postgres_outage.seconds_until_served_after_return', ((Date.now() - back) / 1000).toFixed(2));
    assert.equal((await call(app.baseUrl, 'GET', '/readyz')).status, 200);
    assert.equal((await call(app.baseUrl, 'PUT', '/api/v1/app_data', { fullAppData: '{"after":"outage"}' })).status, 201);
  });
});
