/**
 * Builds the auction of one block: the live orders (one indexed query), then the orders that can actually be
 * settled — presignature confirmed, owner and receiver not banned, tokens not denied, not in flight, owner's
 * balance and vault-relayer allowance sufficient (one multicall for every (owner, sell token) pair, at the
 * block), native prices known for both tokens (one price read per distinct token, batched by the client; read
 * alongside the balances, for the tokens of every live order).
 * Every order left out is reported with the order-event label and reason upstream uses for it
 * (`invalid`: the owner must act; `filtered`: the system cannot price or place it now). Orders in flight are left
 * out silently: their latest event stays `executing`.
 * Out-of-market limit orders are in the auction; they are simply not filled until the market reaches them.
 * Pre-hook (permit) simulations run a few at a time; the orders' hooks share half the block's gas limit (orders
 * beyond it wait, `filtered: hook_gas_limit`), so no settlement's hooks can need more gas than a block holds.
 */
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { ChainReader } from '../chain/reader.js';
import type { DB } from '../db/schema.js';
import type { NativePriceSource } from '../orderbook/pricing/trade-estimator.js';
import { NO_ORDER_HOOKS, orderFeePolicies, orderHooksOf, parseAppDataDocument, remainingAmount, trampolineGas, trampolineInteraction, WRAP_ALL_CALLDATA, type OrderHooks, type PartnerFee, type ScheduledPolicy } from '../protocol/index.js';
import { preHookAllowance } from '../chain/pre-hook-allowance.js';
import { PRICE_SCALE, type Auction, type ExcludedOrder, type SolvableOrder } from '../solver/auction-types.js';
import { queryAppData, querySolvableOrders, type SolvableOrderRow } from './solvable-orders-query.js';

export interface AuctionBuilderOptions {
  chainId: number;
  db: Kysely<DB>;
  reader: ChainReader;
  settlement: Address;
  vaultRelayer: Address;
  /** the trampoline that runs order hooks in settlements; null: orders with hooks are left out (filtered) */
  hooksTrampoline?: Address | null;
  nativePrices: NativePriceSource;
  /** lowercase addresses whose orders never enter an auction */
  bannedAddresses?: ReadonlySet<string>;
  /** lowercase tokens that never trade */
  deniedTokens?: ReadonlySet<string>;
  /** the fee schedule (issue 23); absent: no protocol fee and no partner fee */
  fees?: AuctionFeeSchedule | null;
}

/** Which protocol fee policies auctions apply (the configured FEE_* values). */
export interface AuctionFeeSchedule {
  policies: readonly ScheduledPolicy[];
  maxPartnerFee: number;
  /** replaces `policies` in auctions whose block time (unix ms) is at or after `from` */
  upcoming: { policies: readonly ScheduledPolicy[]; from: number } | null;
}

/** The schedule in force at a block time (unix seconds): the upcoming one once its time has come. */
export function scheduleAt(fees: AuctionFeeSchedule, timestamp: number): readonly ScheduledPolicy[] {
  return fees.upcoming && timestamp * 1000 >= fees.upcoming.from ? fees.upcoming.policies : fees.policies;
}

/** What an auction uses of an order's app data: its hooks and its partner fees. */
interface AppDataUse {
  hooks: OrderHooks;
  partnerFees: readonly PartnerFee[];
}

const NO_APP_DATA_USE: AppDataUse = { hooks: NO_ORDER_HOOKS, partnerFees: [] };

/** An unknown or unparsable document: no hooks, no partner fee (as upstream). */
function appDataUseOf(text: string | undefined): AppDataUse {
  if (text === undefined) return NO_APP_DATA_USE;
  try {
    const { hooks, partnerFees } = parseAppDataDocument(text).protocol;
    return { hooks, partnerFees };
  } catch {
    return NO_APP_DATA_USE;
  }
}

export interface BlockRef {
  number: bigint | number;
  timestamp: bigint | number;
}

export interface BuiltAuction {
  /** the auction without its id (the store assigns it) */
  auction: Omit<Auction, 'id'>;
  excluded: ExcludedOrder[];
  /** live orders skipped because a submitted settlement holds them */
  inFlight: number;
  /** live orders the query returned */
  candidates: number;
}

const APP_DATA_CACHE_SIZE = 10_000;
/** pre-hook (permit) simulations run at once while an auction is built */
const PERMIT_SIMULATIONS_AT_ONCE = 8;

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachAtMost<T>(limit: number, items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** What an order may still be filled by, in sell units (sell orders, before fees) or buy units (buy orders). */
export const remainingOf: (row: Pick<SolvableOrderRow, 'kind' | 'sellAmount' | 'buyAmount' | 'executedSell' | 'executedBuy' | 'executedFee'>) => bigint = remainingAmount;

/** Sell tokens an order needs from its owner to be settled now: all of it (fill-or-kill) or one atom (partially fillable). */
function neededBalance(row: SolvableOrderRow, remaining: bigint): bigint {
  if (row.partiallyFillable) return 1n;
  return row.kind === 'sell' ? remaining + row.feeAmount : row.sellAmount + row.feeAmount;
}

/** A read started early; its rejection is kept for whoever awaits it (never an unhandled rejection). */
function early<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

export class AuctionBuilder {
  private readonly appDataUse = new Map<Hex, AppDataUse>();
  /** the tokens and (owner, sell token) pairs of the last build's live orders: read again while the next queries */
  private lastTokens: Address[] = [];
  private lastPairs: Array<{ owner: Address; token: Address }> = [];

  constructor(private readonly options: AuctionBuilderOptions) {}

  async build(block: BlockRef, inFlight: ReadonlySet<Hex> = new Set()): Promise<BuiltAuction> {
    const { chainId, db, reader, vaultRelayer } = this.options;
    const blockNumber = BigInt(block.number);
    const timestamp = Number(block.timestamp);
    // The chain reads do not wait for the query: the block's gas limit, and the native prices and the balances
    // of the last build's tokens and pairs (live orders change little from one block to the next), are read while
    // the database works; what the query brings that they miss is read after it, at the same block.
    const gasLimitRead = early(reader.client.getBlock({ blockNumber }).then((b) => b.gasLimit, () => null));
    const pricesRead = new Map<Address, Promise<number | null>>();
    const readPrice = (t: Address) => {
      let p = pricesRead.get(t);
      if (!p) pricesRead.set(t, (p = this.options.nativePrices.nativePrice(t).catch(() => null)));
      return p;
    };
    for (const t of this.lastTokens) readPrice(t);
    const readFunds = (pairs: Array<{ owner: Address; token: Address }>) => early(pairs.length > 0 ? reader.balancesAndAllowances(pairs, vaultRelayer, { blockNumber }) : Promise.resolve([]));
    const earlyPairs = this.lastPairs;
    const earlyFunds = readFunds(earlyPairs);
    // the client sends its batched requests from a timer: let them go out before an in-process database (PGlite)
    // holds the thread for the query
    if (earlyPairs.length > 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const rows = await querySolvableOrders(db, chainId, timestamp);
    const excluded: ExcludedOrder[] = [];
    const banned = this.options.bannedAddresses ?? new Set<string>();
    const denied = this.options.deniedTokens ?? new Set<string>();

    let held = 0;
    const live: SolvableOrderRow[] = [];
    for (const row of rows) {
      if (inFlight.has(row.uid)) held++;
      else if (banned.has(row.owner) || (row.receiver !== null && banned.has(row.receiver))) excluded.push({ uid: row.uid, label: 'invalid', reason: 'banned_user' });
      else if (denied.has(row.sellToken) || denied.has(row.buyToken)) excluded.push({ uid: row.uid, label: 'invalid', reason: 'unsupported_token' });
      else if (row.signingScheme === 'presign' && row.presigned !== true) excluded.push({ uid: row.uid, label: 'invalid', reason: 'invalid_signature' });
      else live.push(row);
    }

    // balances and allowances: one multicall over the distinct (owner, sell token) pairs, at the auction's block
    const pairKeys = new Map<string, { owner: Address; token: Address }>();
    for (const row of live) if (!row.ethflow) pairKeys.set(`${row.owner}:${row.sellToken}`, { owner: row.owner, token: row.sellToken });
    const pairs = [...pairKeys.values()];
    const funds = new Map<string, { balance: bigint; allowance: bigint }>();
    // the balances multicall, the native prices of every live order's tokens and the app-data hooks at once
    const liveTokenSet = new Set<Address>();
    for (const row of live) liveTokenSet.add(row.sellToken).add(row.buyToken);
    const liveTokens = [...liveTokenSet];
    const earlyKeys = new Set(earlyPairs.map((p) => `${p.owner}:${p.token}`));
    const latePairs = pairs.filter((p) => !earlyKeys.has(`${p.owner}:${p.token}`));
    const [readEarly, readLate, nativePrices, appData, gasLimit] = await Promise.all([
      earlyFunds,
      readFunds(latePairs),
      Promise.all(liveTokens.map(readPrice)),
      // hooks: pre-hooks run before an order's first fill only, post-hooks after every fill (through the trampoline)
      this.appData(live.map((row) => row.appData)),
      // the block's gas limit bounds the hooks one settlement may run
      gasLimitRead,
    ]);
    for (const [list, read] of [[earlyPairs, readEarly], [latePairs, readLate]] as const) {
      read.forEach((r, i) => {
        const key = `${list[i]!.owner}:${list[i]!.token}`;
        if (pairKeys.has(key)) funds.set(key, { balance: r.balance ?? 0n, allowance: r.allowance ?? 0n });
      });
    }
    this.lastTokens = liveTokens;
    this.lastPairs = pairs;
    const trampoline = this.options.hooksTrampoline ?? null;
    const dueOf = (row: SolvableOrderRow): OrderHooks => {
      const orderHooks = (appData.get(row.appData) ?? NO_APP_DATA_USE).hooks;
      const unfilled = row.executedSell === 0n && row.executedBuy === 0n;
      return { pre: unfilled ? orderHooks.pre : [], post: orderHooks.post };
    };
    const fundsOf = (row: SolvableOrderRow) => funds.get(`${row.owner}:${row.sellToken}`) ?? { balance: 0n, allowance: 0n };
    // the allowances pre-hooks (permits) grant: simulated a few at a time, not one by one
    const permitted = new Map<Hex, bigint>();
    if (trampoline !== null) {
      const needPermit = live.filter((row) => dueOf(row).pre.length > 0 && fundsOf(row).allowance < neededBalance(row, remainingOf(row)));
      await eachAtMost(PERMIT_SIMULATIONS_AT_ONCE, needPermit, async (row) => {
        permitted.set(row.uid, await preHookAllowance(reader, { hooks: dueOf(row).pre, owner: row.owner, token: row.sellToken, spender: vaultRelayer, trampoline, now: timestamp }, { blockNumber }));
      });
    }
    // the hooks of one settlement must fit a block: the auction's orders share half the block's gas limit for them
    const hookBudget = gasLimit !== null ? gasLimit / 2n : null;
    let hookGasTaken = 0n;
    const funded: Array<{ row: SolvableOrderRow; remaining: bigint; available: bigint; hooks: OrderHooks }> = [];
    // native prices (read above for every live order's tokens; only the used ones stay)
    const prices = new Map<Address, bigint>();
    liveTokens.forEach((t, i) => {
      const p = nativePrices[i];
      if (p === null || p === undefined || !Number.isFinite(p) || p <= 0) return;
      const scaled = BigInt(Math.round(p * Number(PRICE_SCALE)));
      if (scaled > 0n) prices.set(t, scaled);
    });

    // An owner's orders of one sell token share its balance and allowance, as the settlement (and `verifySolution`)
    // sees them: fill-or-kill orders each reserve what they need, and one the earlier ones leave short is out
    // (`insufficient_balance`/`insufficient_allowance`). Without this, orders that fit alone but not together all
    // enter the auction, every solution routing them overdraws the owner and is refused, and they hold up every other
    // order of their pair (issue 19, major 9). Orders are served the most generous limit first (what they sell over
    // what they ask, at native prices; unpriced ones last), then the oldest (`querySolvableOrders` returns the rows
    // oldest first): an owner's far-off limit order does not starve its own market order. Partially fillable orders
    // need only what is left to be positive.
    const reserved = new Map<string, bigint>();
    const valued = (row: SolvableOrderRow): { n: bigint; d: bigint } | null => {
      const ps = prices.get(row.sellToken);
      const pb = prices.get(row.buyToken);
      return ps !== undefined && pb !== undefined && row.buyAmount > 0n ? { n: row.sellAmount * ps, d: row.buyAmount * pb } : null;
    };
    const age = new Map(live.map((row, i) => [row.uid, i]));
    // each order's value and age worked out once, not once per comparison
    const ranked = live.map((row, i) => ({ row, value: valued(row), age: i }));
    const generousFirst = (x: (typeof ranked)[number], y: (typeof ranked)[number]): number => {
      const vx = x.value;
      const vy = y.value;
      if (vx && vy && vx.n * vy.d !== vy.n * vx.d) return vx.n * vy.d > vy.n * vx.d ? -1 : 1;
      if (!vx !== !vy) return vx ? -1 : 1;
      return x.age - y.age;
    };
    for (const { row } of ranked.sort(generousFirst)) {
      const remaining = remainingOf(row);
      const due = dueOf(row);
      if (trampoline === null && due.pre.length + due.post.length > 0) {
        excluded.push({ uid: row.uid, label: 'filtered', reason: 'hooks_unsupported' });
        continue;
      }
      if (row.ethflow) {
        // the contract holds the order's ETH and wraps it in the order's pre-interaction: its WETH balance says nothing
        funded.push({ row, remaining, available: remaining, hooks: due });
        continue;
      }
      const f = fundsOf(row);
      const needed = neededBalance(row, remaining);
      let allowance = f.allowance;
      const granted = permitted.get(row.uid);
      if (granted !== undefined && granted > allowance) allowance = granted;
      const share = `${row.owner}:${row.sellToken}`;
      const taken = reserved.get(share) ?? 0n;
      if (f.balance - taken < needed) excluded.push({ uid: row.uid, label: 'invalid', reason: 'insufficient_balance' });
      else if (allowance - taken < needed) excluded.push({ uid: row.uid, label: 'invalid', reason: 'insufficient_allowance' });
      else {
        const gas = trampolineGas(due.pre) + trampolineGas(due.post);
        if (gas > 0n && hookBudget !== null && hookGasTaken + gas > hookBudget) {
          excluded.push({ uid: row.uid, label: 'filtered', reason: 'hook_gas_limit' });
          continue;
        }
        hookGasTaken += gas;
        if (!row.partiallyFillable) reserved.set(share, taken + needed);
        funded.push({ row, remaining, available: f.balance < allowance ? f.balance : allowance, hooks: due });
      }
    }

    const fees = this.options.fees ?? null;
    const schedule = fees ? scheduleAt(fees, timestamp) : [];
    const orders: SolvableOrder[] = [];
    funded.sort((x, y) => age.get(x.row.uid)! - age.get(y.row.uid)!); // the auction lists its orders oldest first
    for (const { row, remaining, available, hooks: due } of funded) {
      if (!prices.has(row.sellToken) || !prices.has(row.buyToken)) {
        excluded.push({ uid: row.uid, label: 'filtered', reason: 'missing_native_price' });
        continue;
      }
      orders.push({
        uid: row.uid,
        owner: row.owner,
        created: row.created,
        sellToken: row.sellToken,
        buyToken: row.buyToken,
        receiver: row.receiver,
        sellAmount: row.sellAmount,
        buyAmount: row.buyAmount,
        validTo: row.validTo,
        appData: row.appData,
        feeAmount: row.feeAmount,
        kind: row.kind,
        partiallyFillable: row.partiallyFillable,
        sellTokenBalance: row.sellTokenBalance as SolvableOrder['sellTokenBalance'],
        buyTokenBalance: row.buyTokenBalance as SolvableOrder['buyTokenBalance'],
        class: row.class,
        signingScheme: row.signingScheme,
        signature: row.signature,
        executedSell: row.executedSell,
        executedBuy: row.executedBuy,
        executedFee: row.executedFee,
        remaining,
        available,
        // an eth-flow order first has its contract wrap the ETH (production's order: wrapAll, then the hooks)
        preInteractions: [
          ...(row.ethflow ? [{ target: row.ethflow.contract, value: 0n, callData: WRAP_ALL_CALLDATA }] : []),
          ...(due.pre.length > 0 && trampoline ? [trampolineInteraction(trampoline, row.uid, 'pre', due.pre)] : []),
        ],
        postInteractions: due.post.length > 0 && trampoline ? [trampolineInteraction(trampoline, row.uid, 'post', due.post)] : [],
        hookGas: trampolineGas(due.pre) + trampolineGas(due.post),
        quote: row.quote,
        // worked out afresh in every auction: a restart with other values or an upcoming schedule applies at once
        feePolicies: fees
          ? orderFeePolicies({ order: row, quote: row.quote, schedule, partnerFees: (appData.get(row.appData) ?? NO_APP_DATA_USE).partnerFees, maxPartnerFee: fees.maxPartnerFee })
          : [],
      });
    }
    // only the prices the auction's orders use
    const used = new Set(orders.flatMap((o) => [o.sellToken, o.buyToken]));
    for (const t of [...prices.keys()]) if (!used.has(t)) prices.delete(t);
    return {
      auction: { chainId, block: Number(blockNumber), timestamp, orders, prices, settlement: this.options.settlement },
      excluded,
      inFlight: held,
      candidates: rows.length,
    };
  }

  /** App-data hooks and partner fees by app-data hash: parsed once per document and remembered. */
  private async appData(appData: Hex[]): Promise<Map<Hex, AppDataUse>> {
    const missing = [...new Set(appData)].filter((h) => !this.appDataUse.has(h));
    if (missing.length > 0) {
      const documents = await queryAppData(this.options.db, missing);
      for (const hash of missing) {
        if (this.appDataUse.size >= APP_DATA_CACHE_SIZE) this.appDataUse.delete(this.appDataUse.keys().next().value!);
        this.appDataUse.set(hash, appDataUseOf(documents.get(hash)));
      }
    }
    return this.appDataUse;
  }
}
