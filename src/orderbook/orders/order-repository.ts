/**
 * Storage of orders: inserts, and reads that come back with what the chain has said about them (executed
 * amounts from indexed trades, on-chain invalidation, the latest presignature) in the same query.
 */
import { sql, type Kysely, type QueryCreator, type Selectable, type Transaction } from 'kysely';
import type { Address, Hex } from 'viem';
import type { Insertable } from 'kysely';
import type { DB, OrdersTable } from '../../db/schema.js';
import { fromNumeric, toBytes, toHex, toNumeric } from '../../db/codec.js';
import { notFullyExecutedSql } from '../../db/order-fill-sql.js';
import { executedAmountsFromColumns, orderFieldsFromColumns, type ExecutedAmounts, type StoredOrderFields } from './order-fields.js';
import type { StoredQuote } from '../quotes/stored-quote.js';

export interface StoredOrder extends StoredOrderFields, ExecutedAmounts {
  chainId: number;
  createdAt: Date;
  settlementContract: Address;
  cancelledAt: Date | null;
  outsideMarket: boolean;
  validFrom: number | null;
  /** an on-chain OrderInvalidated was indexed */
  invalidatedOnChain: boolean;
  /** latest PreSignature event: true/false, or null when none */
  presigned: boolean | null;
  fullAppData: string | null;
  quote: (StoredQuote & { id: number | null }) | null;
  /** for an order placed through an eth-flow contract: who placed it, the user's deadline, its fate */
  ethflow: EthFlowFacts | null;
}

export interface EthFlowFacts {
  /** the eth-flow contract (the order's owner) */
  contract: Address;
  /** who called createOrder: the real trader */
  sender: Address;
  userValidTo: number;
  placementError: string | null;
  /** the user invalidated it while it was live (OrderInvalidation) */
  invalidated: boolean;
  /** the OrderRefund transaction after its expiry, if any */
  refundTxHash: Hex | null;
}

type Db = Kysely<DB> | Transaction<DB>;

function baseQuery(db: Db) {
  return db
    .selectFrom('orders as o')
    .leftJoin('app_data as ad', 'ad.contract_app_data', 'o.app_data')
    .leftJoin('order_quotes as q', (join) => join.onRef('q.chain_id', '=', 'o.chain_id').onRef('q.order_uid', '=', 'o.uid'))
    .leftJoin('ethflow_placements as ef', (join) => join.onRef('ef.chain_id', '=', 'o.chain_id').onRef('ef.order_uid', '=', 'o.uid'))
    .selectAll('o')
    .select([
      'ef.contract as ef_contract',
      'ef.sender as ef_sender',
      'ef.user_valid_to as ef_user_valid_to',
      'ef.placement_error as ef_placement_error',
      sql<boolean>`exists (select 1 from ethflow_invalidations x where x.chain_id = o.chain_id and x.order_uid = o.uid)`.as('ef_invalidated'),
      sql<Uint8Array | null>`(select r.tx_hash from ethflow_refunds r where r.chain_id = o.chain_id and r.order_uid = o.uid order by r.block_number, r.log_index limit 1)`.as('ef_refund_tx'),
      'ad.full_app_data',
      'q.sell_amount as q_sell_amount',
      'q.buy_amount as q_buy_amount',
      'q.fee_amount as q_fee_amount',
      'q.gas_amount as q_gas_amount',
      'q.gas_price as q_gas_price',
      'q.sell_token_price as q_sell_token_price',
      'q.solver as q_solver',
      'q.verified as q_verified',
      sql<string>`coalesce((select sum(t.sell_amount) from trades t where t.chain_id = o.chain_id and t.order_uid = o.uid), 0)`.as('executed_sell'),
      sql<string>`coalesce((select sum(t.buy_amount) from trades t where t.chain_id = o.chain_id and t.order_uid = o.uid), 0)`.as('executed_buy'),
      sql<string>`coalesce((select sum(t.fee_amount) from trades t where t.chain_id = o.chain_id and t.order_uid = o.uid), 0)`.as('executed_fee'),
      sql<boolean>`exists (select 1 from invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid)`.as('invalidated_on_chain'),
      sql<boolean | null>`(select p.signed from presignature_events p where p.chain_id = o.chain_id and p.order_uid = o.uid order by p.block_number desc, p.log_index desc limit 1)`.as('presigned'),
    ]);
}

type Row = Awaited<ReturnType<ReturnType<typeof baseQuery>['executeTakeFirstOrThrow']>>;

function fromRow(row: Row): StoredOrder {
  return {
    ...orderFieldsFromColumns(row),
    ...executedAmountsFromColumns(row),
    chainId: row.chain_id,
    createdAt: new Date(row.created_at),
    settlementContract: toHex(row.settlement_contract) as Address,
    cancelledAt: row.cancellation_timestamp ? new Date(row.cancellation_timestamp) : null,
    outsideMarket: row.outside_market,
    validFrom: row.valid_from === null ? null : Number(row.valid_from),
    invalidatedOnChain: Boolean(row.invalidated_on_chain),
    presigned: row.presigned === null || row.presigned === undefined ? null : Boolean(row.presigned),
    fullAppData: row.full_app_data ? Buffer.from(row.full_app_data).toString('utf8') : null,
    ethflow: row.ef_sender
      ? {
          contract: toHex(row.ef_contract!) as Address,
          sender: toHex(row.ef_sender) as Address,
          userValidTo: Number(row.ef_user_valid_to),
          placementError: row.ef_placement_error ?? null,
          invalidated: Boolean(row.ef_invalidated),
          refundTxHash: row.ef_refund_tx ? toHex(row.ef_refund_tx) : null,
        }
      : null,
    quote:
      row.q_sell_amount === null || row.q_sell_amount === undefined
        ? null
        : {
            id: null,
            sellAmount: fromNumeric(row.q_sell_amount),
            buyAmount: fromNumeric(row.q_buy_amount!),
            feeAmount: fromNumeric(row.q_fee_amount!),
            gasAmount: fromNumeric(row.q_gas_amount!),
            gasPrice: fromNumeric(row.q_gas_price!),
            sellTokenPrice: Number(row.q_sell_token_price),
            solver: row.q_solver!,
            verified: Boolean(row.q_verified),
          },
  };
}

export interface NewOrder extends StoredOrderFields {
  chainId: number;
  settlementContract: Address;
  outsideMarket: boolean;
  validFrom: number | null;
  /** an eth-flow order's user deadline (its validTo is 2^32 − 1) */
  trueValidTo?: number | null;
  /** default: now */
  createdAt?: Date;
}

export interface OrderRepositoryOptions {
  /**
   * Group concurrent inserts (default true): worth it where the database runs one statement at a time anyway
   * (PGlite, on this thread); over a PostgreSQL pool, concurrent inserts run side by side instead.
   */
  groupInserts?: boolean;
}

export class OrderRepository {
  private readonly groupInserts: boolean;

  constructor(
    private readonly db: Kysely<DB>,
    options: OrderRepositoryOptions = {},
  ) {
    this.groupInserts = options.groupInserts ?? true;
  }

  transaction<T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  /**
   * Inserts the order (+ its quote and a `created` event); false when the UID already exists. Outside a transaction
   * (and with `groupInserts`), orders inserted concurrently share statements: while one insert runs, the next ones
   * queue and go in together as one statement when it is done (the database's cost per statement paid once for all).
   */
  async insert(order: NewOrder, quote: StoredQuote | null, db: Db = this.db): Promise<boolean> {
    if (db !== this.db || !this.groupInserts) return this.insertOne(order, quote, db);
    return new Promise<boolean>((resolve, reject) => {
      this.queuedInserts.push({ order, quote, resolve, reject });
      if (!this.insertsRunning) {
        // inserts asked for in the same turn of the event loop (every request read meanwhile) go in together
        this.insertsRunning = true;
        setImmediate(() => void this.insertQueued());
      }
    });
  }

  private queuedInserts: QueuedInsert[] = [];
  private insertsRunning = false;

  /** Inserts the queued orders, a batch per statement, until none is left. */
  private async insertQueued(): Promise<void> {
    try {
      while (this.queuedInserts.length > 0) {
        const batch = takeInsertBatch(this.queuedInserts);
        this.queuedInserts = this.queuedInserts.filter((q) => !batch.includes(q));
        await this.insertBatch(batch);
      }
    } finally {
      this.insertsRunning = false;
    }
  }

  /** One statement for the batch; if it fails, each order again on its own (one order's failure is its own). */
  private async insertBatch(batch: QueuedInsert[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const inserted = await this.insertMany(batch);
        for (const q of batch) q.resolve(inserted.has(insertKey(q.order)));
        return;
      } catch {
        // below: one by one
      }
    }
    for (const q of batch) await this.insertOne(q.order, q.quote, this.db).then(q.resolve, q.reject);
  }

  private async insertOne(order: NewOrder, quote: StoredQuote | null, db: Db): Promise<boolean> {
    // one statement (atomic on its own, so it needs no transaction): the order, its quote and its `created` event;
    // the quote and the event are inserted only when the order row was (no conflict)
    const quoteRow = quote ? orderQuoteValues(order.chainId, order.uid, quote) : null;
    const result = await db
      .with('o', (qb) => qb.insertInto('orders').values(orderValues(order)).onConflict((oc) => oc.columns(['chain_id', 'uid']).doNothing()).returning(['chain_id', 'uid']))
      .with('q', (qb) =>
        qb
          .insertInto('order_quotes')
          .columns(['chain_id', 'order_uid', 'sell_amount', 'buy_amount', 'fee_amount', 'gas_amount', 'gas_price', 'sell_token_price', 'solver', 'verified'])
          .expression((eb) =>
            eb
              .selectFrom('o')
              .select([
                'o.chain_id',
                'o.uid',
                sql`cast(${quoteRow?.sell_amount ?? null} as numeric)`.as('sell_amount'),
                sql`cast(${quoteRow?.buy_amount ?? null} as numeric)`.as('buy_amount'),
                sql`cast(${quoteRow?.fee_amount ?? null} as numeric)`.as('fee_amount'),
                sql`cast(${quoteRow?.gas_amount ?? null} as numeric)`.as('gas_amount'),
                sql`cast(${quoteRow?.gas_price ?? null} as numeric)`.as('gas_price'),
                sql`cast(${quoteRow?.sell_token_price ?? null} as float8)`.as('sell_token_price'),
                sql`cast(${quoteRow?.solver ?? null} as text)`.as('solver'),
                sql`cast(${quoteRow?.verified ?? null} as boolean)`.as('verified'),
              ])
              .where(sql.lit(quoteRow !== null)),
          )
          .returning('order_uid'),
      )
      .with('e', createdEvents)
      .selectFrom('o')
      .select('o.uid')
      .executeTakeFirst();
    return result !== undefined;
  }

  /**
   * `insertOne` for several orders (distinct UIDs) in one statement: the orders, the quotes of those that have one
   * (joined to the inserted rows by chain and UID) and the `created` events of the inserted rows. Returns the keys
   * (`insertKey`) of the orders inserted: the others' UIDs already existed.
   */
  private async insertMany(batch: QueuedInsert[]): Promise<Set<string>> {
    const quoted = batch.filter((q) => q.quote !== null).map((q) => orderQuoteValues(q.order.chainId, q.order.uid, q.quote!));
    const quoteRows = sql.join(
      quoted.map(
        (r) =>
          sql`(cast(${r.chain_id} as integer), cast(${r.order_uid} as bytea), cast(${r.sell_amount} as numeric), cast(${r.buy_amount} as numeric), cast(${r.fee_amount} as numeric), cast(${r.gas_amount} as numeric), cast(${r.gas_price} as numeric), cast(${r.sell_token_price} as float8), cast(${r.solver} as text), cast(${r.verified} as boolean))`,
      ),
    );
    const rows = await this.db
      .with('o', (qb) => qb.insertInto('orders').values(batch.map((q) => orderValues(q.order))).onConflict((oc) => oc.columns(['chain_id', 'uid']).doNothing()).returning(['chain_id', 'uid']))
      .with('q', (qb) =>
        qb
          .insertInto('order_quotes')
          .columns(['chain_id', 'order_uid', 'sell_amount', 'buy_amount', 'fee_amount', 'gas_amount', 'gas_price', 'sell_token_price', 'solver', 'verified'])
          .expression(
            quoted.length === 0
              ? sql`select o.chain_id, o.uid, null::numeric, null::numeric, null::numeric, null::numeric, null::numeric, null::float8, null::text, null::boolean from o where false`
              : sql`select o.chain_id, o.uid, v.sell_amount, v.buy_amount, v.fee_amount, v.gas_amount, v.gas_price, v.sell_token_price, v.solver, v.verified
                    from o join (values ${quoteRows}) as v(chain_id, uid, sell_amount, buy_amount, fee_amount, gas_amount, gas_price, sell_token_price, solver, verified)
                    on v.chain_id = o.chain_id and v.uid = o.uid`,
          )
          .returning('order_uid'),
      )
      .with('e', createdEvents)
      .selectFrom('o')
      .select(['o.chain_id', 'o.uid'])
      .execute();
    return new Set(rows.map((r) => `${r.chain_id}:${toHex(r.uid)}`));
  }

  async addEvent(chainId: number, uid: Hex, label: string, reason: string | null, db: Db = this.db): Promise<void> {
    await db.insertInto('order_events').values({ chain_id: chainId, order_uid: toBytes(uid), label, reason }).execute();
  }

  /** Sets the cancellation timestamp of orders not yet cancelled; returns how many changed. */
  async markCancelled(chainId: number, uids: Hex[], db: Db = this.db): Promise<number> {
    if (uids.length === 0) return 0;
    const changed = await db
      .updateTable('orders')
      .set({ cancellation_timestamp: sql`now()` as unknown as Date })
      .where('chain_id', '=', chainId)
      .where('uid', 'in', uids.map(toBytes))
      .where('cancellation_timestamp', 'is', null)
      .returning('uid')
      .execute();
    for (const row of changed) await this.addEvent(chainId, toHex(row.uid), 'cancelled', null, db);
    return changed.length;
  }

  async get(chainId: number, uid: Hex, db: Db = this.db): Promise<StoredOrder | null> {
    const row = await baseQuery(db).where('o.chain_id', '=', chainId).where('o.uid', '=', toBytes(uid)).executeTakeFirst();
    return row ? fromRow(row) : null;
  }

  async getMany(chainId: number, uids: Hex[], db: Db = this.db): Promise<StoredOrder[]> {
    if (uids.length === 0) return [];
    const rows = await baseQuery(db).where('o.chain_id', '=', chainId).where('o.uid', 'in', uids.map(toBytes)).execute();
    return rows.map(fromRow);
  }

  /** The owner's orders, and the eth-flow orders it placed on chain (as production: the sender sees them). */
  async byOwner(chainId: number, owner: Address, offset: number, limit: number): Promise<StoredOrder[]> {
    const rows = await baseQuery(this.db)
      .where('o.chain_id', '=', chainId)
      .where((eb) =>
        eb.or([
          eb('o.owner', '=', toBytes(owner)),
          eb('o.uid', 'in', eb.selectFrom('ethflow_placements as sp').select('sp.order_uid').where('sp.chain_id', '=', chainId).where('sp.sender', '=', toBytes(owner))),
        ]),
      )
      .orderBy('o.created_at', 'desc')
      .orderBy('o.uid')
      .offset(offset)
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  async byTransaction(chainId: number, txHash: Hex): Promise<StoredOrder[]> {
    const rows = await baseQuery(this.db)
      .where('o.chain_id', '=', chainId)
      .where((eb) => eb.exists(eb.selectFrom('trades as t').select('t.order_uid').whereRef('t.chain_id', '=', 'o.chain_id').whereRef('t.order_uid', '=', 'o.uid').where('t.tx_hash', '=', toBytes(txHash))))
      .orderBy('o.created_at')
      .execute();
    return rows.map(fromRow);
  }

  /**
   * Open (not cancelled, not expired, not invalidated) limit orders of an owner that were outside the market.
   * Presign orders count only once their latest on-chain presignature says signed: anyone can post them.
   */
  async countOpenOutsideMarketLimitOrders(chainId: number, owner: Address, nowSeconds: number): Promise<number> {
    const row = await this.db
      .selectFrom('orders as o')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('o.chain_id', '=', chainId)
      .where('o.owner', '=', toBytes(owner))
      .where('o.class', '=', 'limit')
      .where('o.outside_market', '=', true)
      .where('o.cancellation_timestamp', 'is', null)
      .where('o.valid_to', '>=', nowSeconds)
      .where(sql<boolean>`not exists (select 1 from invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid)`)
      .where(
        sql<boolean>`(o.signing_scheme <> 'presign' or coalesce((select p.signed from presignature_events p where p.chain_id = o.chain_id and p.order_uid = o.uid order by p.block_number desc, p.log_index desc limit 1), false))`,
      )
      .where(
        notFullyExecutedSql({
          soldBeforeFees: sql`(select sum(t.sell_amount - t.fee_amount) from trades t where t.chain_id = o.chain_id and t.order_uid = o.uid)`,
          bought: sql`(select sum(t.buy_amount) from trades t where t.chain_id = o.chain_id and t.order_uid = o.uid)`,
        }),
      )
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

interface QueuedInsert {
  order: NewOrder;
  quote: StoredQuote | null;
  resolve(inserted: boolean): void;
  reject(err: unknown): void;
}

/** orders in one group insert at most (≈ 35 parameters each) */
/** The `created` event of each order row an insert statement's `o` returned (and only of those). */
function createdEvents<S extends DB & { o: Pick<Selectable<OrdersTable>, 'chain_id' | 'uid'> }>(qb: QueryCreator<S>) {
  return (qb as unknown as QueryCreator<DB & { o: Pick<Selectable<OrdersTable>, 'chain_id' | 'uid'> }>)
    .insertInto('order_events')
    .columns(['chain_id', 'order_uid', 'label', 'reason'])
    .expression((eb) => eb.selectFrom('o').select(['o.chain_id', 'o.uid', sql.lit('created').as('label'), sql.lit(null).as('reason')]))
    .returning('order_uid');
}

const MAX_INSERT_BATCH = 100;

function insertKey(order: Pick<NewOrder, 'chainId' | 'uid'>): string {
  return `${order.chainId}:${order.uid.toLowerCase()}`;
}

/** The next group insert: queued orders in arrival order, each UID once (a repeated one waits for the next). */
function takeInsertBatch(queued: readonly QueuedInsert[]): QueuedInsert[] {
  const batch: QueuedInsert[] = [];
  const keys = new Set<string>();
  for (const q of queued) {
    if (batch.length >= MAX_INSERT_BATCH) break;
    const key = insertKey(q.order);
    if (keys.has(key)) continue;
    keys.add(key);
    batch.push(q);
  }
  return batch;
}

function orderValues(order: NewOrder): Insertable<OrdersTable> {
  return {
    chain_id: order.chainId,
    uid: toBytes(order.uid),
    owner: toBytes(order.owner),
    sell_token: toBytes(order.sellToken),
    buy_token: toBytes(order.buyToken),
    receiver: order.receiver ? toBytes(order.receiver) : null,
    sell_amount: toNumeric(order.sellAmount),
    buy_amount: toNumeric(order.buyAmount),
    valid_to: order.validTo,
    app_data: toBytes(order.appData),
    fee_amount: toNumeric(order.feeAmount),
    kind: order.kind,
    partially_fillable: order.partiallyFillable,
    signature: toBytes(order.signature),
    signing_scheme: order.signingScheme,
    sell_token_balance: order.sellTokenBalance,
    buy_token_balance: order.buyTokenBalance,
    class: order.class,
    settlement_contract: toBytes(order.settlementContract),
    outside_market: order.outsideMarket,
    valid_from: order.validFrom,
    true_valid_to: order.trueValidTo ?? null,
    ...(order.createdAt ? { created_at: order.createdAt } : {}),
  };
}

function orderQuoteValues(chainId: number, uid: Hex, quote: StoredQuote) {
  return {
    chain_id: chainId,
    order_uid: toBytes(uid),
    sell_amount: toNumeric(quote.sellAmount),
    buy_amount: toNumeric(quote.buyAmount),
    fee_amount: toNumeric(quote.feeAmount),
    gas_amount: toNumeric(quote.gasAmount),
    gas_price: toNumeric(quote.gasPrice),
    sell_token_price: quote.sellTokenPrice,
    solver: quote.solver,
    verified: quote.verified,
  };
}
