/**
 * `kill -9` of the node while 2 000 order submissions are in flight, then a restart on the same DATA_DIR and
 * database: every order answered 201 is there, complete (every signed field as submitted, status open), and
 * nothing else half-written (every order the node lists is one of the submissions, whole). On PostgreSQL (a
 * fresh database on the local server) and on PGlite (the node's own files in DATA_DIR). The restart also has
 * to cope with the devnet's anvil, which outlives its killed parent.
 *
 * Figures (acknowledged, found, restart time) are printed as `FAULT-FIGURE` lines for the faults run's summary.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import type { Address, Hex } from 'viem';
import { findFreePort, answersChainId } from '../../src/chain/devnet/anvil-process.js';
import { skipUnless } from '../fixtures/required-services.js';
import { createTestPostgres, type TestPostgres } from '../fixtures/databases.js';
import { makeOrder, orderBody, signOrder, uidOf, type OrderBody } from '../fixtures/orders.js';
import { startNode, type NodeProcess } from './node-process.js';
import { figure } from './figures.js';
import { stopOrphanedAnvil } from '../../src/chain/devnet/orphaned-anvil.js';

const SUBMISSIONS = Number(process.env.FAULT_ORDERS ?? 2000);

interface DevnetInfo {
  tokens: Array<{ symbol: string; address: Address }>;
  accounts: Array<{ role: string; privateKey: Hex; address: Address }>;
}

for (const engine of ['postgres', 'pglite'] as const) {
  describe(`kill -9 during ${SUBMISSIONS} concurrent order submissions (${engine})`, { skip: engine === 'postgres' ? await skipUnless('postgres') : false }, () => {
    const dataDir = mkdtempSync(join(tmpdir(), `bb-kill9-${engine}-`));
    let database: TestPostgres | null = null;
    let node: NodeProcess | null = null;
    after(async () => {
      await node?.kill9().catch(() => {});
      await node?.stop().catch(() => {});
      // a failure between the kill and the restart leaves the orphaned anvil: stop it as the restart would
      await stopOrphanedAnvil(join(dataDir, 'devnet-chain', 'anvil.pid')).catch(() => {});
      await database?.drop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('keeps every acknowledged order whole and nothing half-written; the restart stops the orphaned anvil', async () => {
      if (engine === 'postgres') database = await createTestPostgres();
      const env = {
        DATA_DIR: dataDir,
        PORT: String(await findFreePort()),
        DEVNET_PORT: String(await findFreePort()),
        DEVNET_HISTORY_HOURS: '0',
        DEVNET_ACTIVITY: 'false',
        DEVNET_BLOCK_TIME: '1',
        AUCTIONS: 'false',
        RATE_LIMIT_QUOTE: '0',
        RATE_LIMIT_ORDERS: '0',
        RATE_LIMIT_OTHER: '0',
        LOG_LEVEL: 'info', // the banner (where it listens) is logged at info
        ...(database ? { DATABASE_URL: database.url } : {}),
      };
      node = await startNode(env);
      const devnet = (await (await fetch(`${node.base}/devnet`)).json()) as DevnetInfo;
      const token = (s: string) => devnet.tokens.find((t) => t.symbol === s)!.address.toLowerCase() as Address;
      const traders = devnet.accounts.filter((a) => a.role === 'trader').map((a) => privateKeyToAccount(a.privateKey));
      assert.ok(traders.length > 0);

      // sign everything first, so the submissions really are concurrent
      const validTo = Math.floor(Date.now() / 1000) + 3600;
      const submissions: Array<{ uid: Hex; owner: Address; body: OrderBody }> = [];
      for (let i = 0; i < SUBMISSIONS; i++) {
        const account = traders[i % traders.length]!;
        const order = makeOrder({ sellToken: token('WETH'), buyToken: token('USDC'), sellAmount: 10n ** 15n + BigInt(i), buyAmount: 1n, validTo });
        submissions.push({ uid: uidOf(order, account.address).toLowerCase() as Hex, owner: account.address.toLowerCase() as Address, body: orderBody(order, await signOrder(account, order), 'eip712', account.address) });
      }

      const acknowledged = new Set<Hex>();
      const refused = new Map<number, number>();
      const samples = new Set<string>();
      let failed = 0;
      const killAt = Math.floor(SUBMISSIONS / 3);
      let killing: Promise<void> | null = null;
      const running = node;
      const started = Date.now();
      await Promise.all(
        submissions.map(async (s) => {
          try {
            const res = await fetch(`${running.base}/api/v1/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(s.body) });
            const body = (await res.json()) as unknown;
            if (res.status === 201) {
              assert.equal(String(body).toLowerCase(), s.uid);
              acknowledged.add(s.uid);
              if (acknowledged.size >= killAt) killing ??= running.kill9();
            } else {
              refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
              if (samples.size < 3) samples.add(`${res.status} ${JSON.stringify(body).slice(0, 200)}`);
            }
          } catch {
            failed++; // the connection died with the node
          }
        }),
      );
      killing ??= running.kill9();
      await killing;
      figure(`${engine}.submitted`, SUBMISSIONS);
      figure(`${engine}.acknowledged_before_kill`, acknowledged.size);
      figure(`${engine}.refused_by_status`, Object.fromEntries(refused));
      figure(`${engine}.cut_by_kill`, failed);
      if (samples.size > 0) figure(`${engine}.refusal_samples`, [...samples]);
      figure(`${engine}.seconds_until_kill`, ((Date.now() - started) / 1000).toFixed(1));
      assert.ok(acknowledged.size > 0, 'some orders were acknowledged before the kill');
      // a submission that waited too long for one of the pool's connections under this load is refused with a
      // retryable 503 (never acknowledged, so never owed); nothing else may be refused
      assert.deepEqual([...refused.keys()].filter((status) => status !== 503), [], `no submission was refused, except 503 under load; node log tail:\n${running.output().slice(-3000)}`);
      assert.ok(await answersChainId(node.devnetRpc), 'the devnet (anvil) outlived its killed node');

      const t = Date.now();
      node = await startNode(env);
      figure(`${engine}.restart_seconds`, ((Date.now() - t) / 1000).toFixed(1));

      // every acknowledged order, whole
      const byUid = new Map(submissions.map((s) => [s.uid, s]));
      let found = 0;
      for (const uid of acknowledged) {
        const res = await fetch(`${node.base}/api/v1/orders/${uid}`);
        assert.equal(res.status, 200, `acknowledged order ${uid} is there after the restart`);
        const order = (await res.json()) as Record<string, unknown>;
        const s = byUid.get(uid)!;
        for (const field of ['sellToken', 'buyToken', 'sellAmount', 'buyAmount', 'validTo', 'appData', 'kind', 'partiallyFillable', 'signature', 'signingScheme']) {
          assert.equal(String(order[field]).toLowerCase(), String(s.body[field]).toLowerCase(), `${uid}.${field}`);
        }
        assert.equal(String(order.owner).toLowerCase(), s.owner);
        assert.equal(order.status, 'open');
        found++;
      }
      // nothing half-written: everything the node lists is one submission, whole
      let listed = 0;
      for (const owner of new Set(submissions.map((s) => s.owner))) {
        for (let offset = 0; ; offset += 1000) {
          const page = (await (await fetch(`${node.base}/api/v1/account/${owner}/orders?limit=1000&offset=${offset}`)).json()) as Array<Record<string, unknown>>;
          for (const order of page) {
            const s = byUid.get(String(order.uid).toLowerCase() as Hex);
            assert.ok(s, `listed order ${String(order.uid)} is one of the submissions`);
            assert.equal(order.sellAmount, s.body.sellAmount);
            assert.equal(String(order.signature).toLowerCase(), s.body.signature.toLowerCase());
            listed++;
          }
          if (page.length < 1000) break;
        }
      }
      figure(`${engine}.acknowledged_found_after_restart`, `${found}/${acknowledged.size}`);
      figure(`${engine}.listed_after_restart (acknowledged + in flight at the kill)`, listed);
      assert.equal(found, acknowledged.size);
      assert.ok(listed >= acknowledged.size);
      assert.equal((await fetch(`${node.base}/readyz`)).status, 200);
      assert.equal(await node.stop(), 0, node.output().slice(-2000));
      node = null;
    });
  });
}
