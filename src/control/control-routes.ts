/**
 * The control API of the devnet (`POST /devnet/control/...`, JSON bodies, errors in the order book's
 * `{errorType, description}`): snapshot/revert, mine, time, auctions pause/resume and run. Registered only where
 * the devnet is served; a node on real chains only has none (404).
 */
import { Type } from '@sinclair/typebox';
import type { HttpServer } from '../http/server.js';
import { sendJson } from '../http/server.js';
import { OrderBookHttpError } from '../http/errors.js';
import { ControlError, MAX_MINE_BLOCKS, MAX_TIME_INCREASE, type DevnetControl } from './devnet-control.js';

const ErrorBody = Type.Object({ errorType: Type.String(), description: Type.String() });
const errors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 500: ErrorBody };
const route = (summary: string, description: string) => ({ tags: ['devnet control'], summary, description });
const config = { api: 'orderbook' as const, rateLimit: false };

async function answer<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ControlError) throw new OrderBookHttpError(err.status, err.errorType, err.description);
    throw err;
  }
}

export function registerControlRoutes(server: HttpServer, control: DevnetControl, prefix = '/devnet/control'): void {
  server.post(
    `${prefix}/snapshot`,
    {
      schema: {
        ...route('Snapshot the chain, the database and the node', 'Returns an id to revert to. The chain (anvil), the database (orders, trades, auctions, competitions, notifications, indexer position) and the node\'s memory are taken together.'),
        body: Type.Object({}, { additionalProperties: false }),
        response: { 200: Type.Object({ id: Type.String() }), ...errors },
      },
      config,
    },
    async (_req, reply) => sendJson(reply, 200, await answer(() => control.snapshot())),
  );

  server.post(
    `${prefix}/revert`,
    {
      schema: {
        ...route('Revert to a snapshot', 'Answers once the chain, the database and every cache are back at the snapshot and the node runs on it again. The snapshot stays usable (revert to it again later); snapshots taken after it are dropped. 404 SnapshotNotFound for an unknown id.'),
        body: Type.Object({ id: Type.String({ pattern: '^[0-9]{1,12}$' }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ id: Type.String() }), ...errors },
      },
      config,
    },
    async (req, reply) => {
      await answer(() => control.revert(req.body.id));
      return sendJson(reply, 200, { id: req.body.id });
    },
  );

  server.post(
    `${prefix}/mine`,
    {
      schema: {
        ...route('Mine blocks', `Answers once \`blocks\` blocks (1..${MAX_MINE_BLOCKS}, default 1) are mined, with the new head.`),
        body: Type.Object({ blocks: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_MINE_BLOCKS })) }, { additionalProperties: false }),
        response: { 200: Type.Object({ blockNumber: Type.Integer() }), ...errors },
      },
      config,
    },
    async (req, reply) => sendJson(reply, 200, await answer(() => control.mine(req.body.blocks ?? 1))),
  );

  server.post(
    `${prefix}/time`,
    {
      schema: {
        ...route('Move the chain\'s time forward', `Mines a block at least \`increase\` seconds (1..${MAX_TIME_INCREASE}) after the previous head and answers with it; the order book goes by the chain\'s time where it is later than the wall clock (always in deterministic mode), so orders whose validTo passed read \`expired\`.`),
        body: Type.Object({ increase: Type.Integer({ minimum: 1, maximum: MAX_TIME_INCREASE }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ blockNumber: Type.Integer(), timestamp: Type.Integer() }), ...errors },
      },
      config,
    },
    async (req, reply) => sendJson(reply, 200, await answer(() => control.time(req.body.increase))),
  );

  server.post(
    `${prefix}/auctions`,
    {
      schema: {
        ...route('Hold auctions back or let them run', 'While paused no auction is created or run (the auction id stands still) and nothing settles, whatever is mined or placed; `{paused: false}` resumes. Deterministic mode starts paused.'),
        body: Type.Object({ paused: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: Type.Object({ paused: Type.Boolean() }), ...errors },
      },
      config,
    },
    async (req, reply) => sendJson(reply, 200, control.setAuctionsPaused(req.body.paused)),
  );

  server.post(
    `${prefix}/auctions/run`,
    {
      schema: {
        ...route('Run one auction now', 'Runs one auction on the current head (also while paused) and answers once its settlement is mined and indexed (its orders already show their fills); `winner` and `txHash` are null when nothing settled. 409 AuctionsDisabled with AUCTIONS=false.'),
        body: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ auctionId: Type.Integer(), winner: Type.Union([Type.String(), Type.Null()]), txHash: Type.Union([Type.String(), Type.Null()]) }),
          ...errors,
        },
      },
      config,
    },
    async (_req, reply) => sendJson(reply, 200, await answer(() => control.runAuction())),
  );
}
