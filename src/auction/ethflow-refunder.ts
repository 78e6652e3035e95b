/**
 * The built-in eth-flow refunder: invalidates expired, unfilled eth-flow orders so that their ETH goes back to
 * whoever placed them (the contract sends it to the creator; the refunder only pays the gas). The resulting
 * `OrderRefund` is indexed like any event and becomes the order's `ethflowData.refundTxHash`.
 *
 * Which orders (reference ethflow.md §7):
 * - `all` (the devnet and forks): every eth-flow order whose user deadline has passed at the head, never traded,
 *   not invalidated and not refunded;
 * - `production` (real chains, only with a key of its own): production's rules on top — not partially fillable,
 *   placed within the lookback (a week), valid for more than two minutes, with a stored quote for the same sell
 *   amount whose buy amount the order's limit is at least 1.9 % below (orders priced near or beyond the market,
 *   and those without a quote, are left to their owners' own `invalidateOrder`).
 * Each candidate is checked on chain (`orders(hash)`: unknown or already invalidated ones are skipped), then sent in
 * `invalidateOrdersIgnoringNotAllowed` calls of at most 30 orders per contract. A failed refund is logged and
 * retried with exponential backoff (per order), so one bad order never holds the others back.
 *
 * @example
 *   const refunder = new EthFlowRefunder({ chainId, db, client, rpcUrl, account, contracts, mode: 'all', logger });
 *   await refunder.run(signal);
 */
import { sql, type Kysely } from 'kysely';
import { TransactionNotFoundError, createWalletClient, http, type Address, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import type { ChainClient } from '../chain/client.js';
import { fromNumeric, toHex } from '../db/codec.js';
import type { DB } from '../db/schema.js';
import { backoffDelay } from '../chain/rpc-retry.js';
import { ETHFLOW_ABI, type EthFlowOrderData } from '../protocol/index.js';
import { sleep } from '../infra/abortable-sleep.js';

export type RefundSelection = 'all' | 'production';

export interface EthFlowRefunderLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface EthFlowRefunderOptions {
  chainId: number;
  db: Kysely<DB>;
  client: ChainClient;
  rpcUrl: string;
  /** pays the gas; must not be an account another loop sends from (nonces) */
  account: LocalAccount;
  /** the eth-flow contracts it may call (lowercase) */
  contracts: readonly Address[];
  mode: RefundSelection;
  logger: EthFlowRefunderLogger;
  /** between passes (default: 2 s for `all` (the devnet and forks: a refund a block or two after the deadline), 30 s for `production`) */
  intervalMs?: number;
  timeoutMs?: number;
}

/** production's defaults (refunder arguments) */
const LOOKBACK_S = 7 * 24 * 3600;
const MIN_VALIDITY_S = 120;
const MIN_PRICE_DEVIATION_BPS = 190n;
const MAX_PER_TX = 30;
/** EIP-1559 on real chains: production's starting tip and fee cap */
const TIP = 30_000_000_000n;
const MAX_FEE_CAP = 2_000_000_000_000n;
const INVALIDATED: Address = '0xffffffffffffffffffffffffffffffffffffffff';
const UNKNOWN: Address = '0x0000000000000000000000000000000000000000';

interface Candidate {
  uid: Hex;
  contract: Address;
  data: EthFlowOrderData;
}

export class EthFlowRefunder {
  /** uid → earliest next attempt (ms) and failures so far */
  private readonly retries = new Map<string, { at: number; failures: number }>();
  private readonly contracts: Set<string>;

  constructor(private readonly options: EthFlowRefunderOptions) {
    this.contracts = new Set(options.contracts.map((c) => c.toLowerCase()));
  }

  async run(signal: AbortSignal): Promise<void> {
    const interval = this.options.intervalMs ?? (this.options.mode === 'all' ? 2_000 : 30_000);
    while (!signal.aborted) {
      try {
        await this.refundOnce();
      } catch (err) {
        if (signal.aborted) return;
        this.options.logger.warn({ chainId: this.options.chainId, err }, 'eth-flow refunder: pass failed');
      }
      await sleep(interval, signal);
    }
  }

  /** One pass: finds the candidates, checks them on chain and sends the refunds; returns the transactions sent. */
  async refundOnce(): Promise<Hex[]> {
    const { client } = this.options;
    const head = await client.getBlock({ blockTag: 'latest' });
    const candidates = (await this.candidates(Number(head.timestamp))).filter((c) => this.contracts.has(c.contract) && this.due(c.uid));
    if (candidates.length === 0) return [];
    const stored = await Promise.all(
      candidates.map((c) =>
        client
          .readContract({ address: c.contract, abi: ETHFLOW_ABI, functionName: 'orders', args: [c.uid.slice(0, 66) as Hex] })
          .then(([owner]) => owner.toLowerCase() as Address)
          .catch(() => null),
      ),
    );
    const refundable = candidates.filter((_, i) => stored[i] !== null && stored[i] !== UNKNOWN && stored[i] !== INVALIDATED);
    const sent: Hex[] = [];
    for (const contract of new Set(refundable.map((c) => c.contract))) {
      const mine = refundable.filter((c) => c.contract === contract);
      for (let i = 0; i < mine.length; i += MAX_PER_TX) {
        const group = mine.slice(i, i + MAX_PER_TX);
        const hash = await this.send(contract, group);
        if (hash) sent.push(hash);
      }
    }
    return sent;
  }

  private due(uid: Hex): boolean {
    const retry = this.retries.get(uid);
    return !retry || retry.at <= Date.now();
  }

  private async send(contract: Address, group: Candidate[]): Promise<Hex | null> {
    const { account, client, logger, chainId } = this.options;
    const wallet = createWalletClient({ account, chain: client.chain, transport: http(this.options.rpcUrl, { timeout: this.options.timeoutMs ?? 30_000 }) });
    try {
      const fees = this.options.mode === 'production' ? await this.fees() : {};
      const hash = await wallet.writeContract({
        address: contract,
        abi: ETHFLOW_ABI,
        functionName: 'invalidateOrdersIgnoringNotAllowed',
        args: [group.map((c) => c.data)],
        chain: client.chain,
        account,
        ...fees,
      });
      const receipt = await this.receiptOf(hash);
      if (receipt.status !== 'success') throw new Error(`refund transaction ${hash} reverted`);
      for (const c of group) this.retries.delete(c.uid);
      logger.info({ chainId, contract, orders: group.map((c) => c.uid), txHash: hash }, 'eth-flow refunder: refunded expired orders');
      return hash;
    } catch (err) {
      if (err instanceof RefundDropped) {
        // not a failure of these orders: they are candidates again at the next pass (once a reorg that removed the
        // refund is indexed), without a backoff
        for (const c of group) this.retries.delete(c.uid);
        logger.info({ chainId, contract, orders: group.map((c) => c.uid), txHash: err.hash }, 'eth-flow refunder: the refund transaction was dropped (a reorg); sending again');
        return null;
      }
      for (const c of group) {
        const failures = (this.retries.get(c.uid)?.failures ?? 0) + 1;
        this.retries.set(c.uid, { failures, at: Date.now() + backoffDelay(failures, { baseDelayMs: 15_000, maxDelayMs: 30 * 60_000 }) });
      }
      logger.warn({ chainId, contract, orders: group.map((c) => c.uid), err }, 'eth-flow refunder: refund failed; retrying later');
      return null;
    }
  }

  /**
   * The refund's receipt, polled every 500 ms up to `timeoutMs` (default 60 s). A transaction the node no longer
   * knows (twice in a row: a reorg or a devnet revert dropped it) ends the wait at once with RefundDropped, where
   * waiting would hold every other refund for the whole timeout.
   */
  private async receiptOf(hash: Hex): Promise<TransactionReceipt> {
    const { client } = this.options;
    const deadline = Date.now() + (this.options.timeoutMs ?? 60_000);
    let unknown = 0;
    for (;;) {
      const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
      if (receipt) return receipt;
      const known = await client.getTransaction({ hash }).then(() => true, (err: unknown) => (err instanceof TransactionNotFoundError ? false : true));
      unknown = known ? 0 : unknown + 1;
      if (unknown >= 2) throw new RefundDropped(hash);
      if (Date.now() >= deadline) throw new Error(`refund transaction ${hash}: no receipt within ${this.options.timeoutMs ?? 60_000} ms`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  private async fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const block = await this.options.client.getBlock({ blockTag: 'latest' });
    const base = block.baseFeePerGas ?? 0n;
    const maxFee = base * 2n + TIP;
    return { maxFeePerGas: maxFee > MAX_FEE_CAP ? MAX_FEE_CAP : maxFee, maxPriorityFeePerGas: TIP };
  }

  /** Expired, never traded, not invalidated, not refunded eth-flow orders (and production's rules in that mode). */
  private async candidates(nowSeconds: number): Promise<Candidate[]> {
    const production = this.options.mode === 'production';
    const { rows } = await sql<{
      uid: Uint8Array; contract: Uint8Array; buy_token: Uint8Array; receiver: Uint8Array | null; sell_amount: string; buy_amount: string;
      app_data: Uint8Array; fee_amount: string; user_valid_to: number | string; partially_fillable: boolean;
    }>`
      select o.uid, ef.contract, o.buy_token, o.receiver, o.sell_amount, o.buy_amount, o.app_data, o.fee_amount,
             ef.user_valid_to, o.partially_fillable
      from ethflow_placements ef
      join orders o on o.chain_id = ef.chain_id and o.uid = ef.order_uid
      ${production ? sql`join order_quotes q on q.chain_id = o.chain_id and q.order_uid = o.uid` : sql``}
      where ef.chain_id = ${this.options.chainId}
        and ef.user_valid_to < ${nowSeconds}
        and not exists (select 1 from trades t where t.chain_id = o.chain_id and t.order_uid = o.uid)
        and not exists (select 1 from ethflow_refunds r where r.chain_id = o.chain_id and r.order_uid = o.uid)
        and not exists (select 1 from ethflow_invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid)
        ${production
          ? sql`and not o.partially_fillable
        and o.created_at >= to_timestamp(${nowSeconds - LOOKBACK_S})
        and ef.user_valid_to - extract(epoch from o.created_at) > ${MIN_VALIDITY_S}
        and q.sell_amount = o.sell_amount
        and (greatest(q.buy_amount, 1) - o.buy_amount) * 10000 >= greatest(q.buy_amount, 1) * ${MIN_PRICE_DEVIATION_BPS.toString()}::numeric`
          : sql``}
      order by ef.user_valid_to
      limit 300`.execute(this.options.db);
    return rows.map((r) => ({
      uid: toHex(r.uid),
      contract: toHex(r.contract) as Address,
      data: {
        buyToken: toHex(r.buy_token) as Address,
        receiver: (r.receiver ? toHex(r.receiver) : UNKNOWN) as Address,
        sellAmount: fromNumeric(r.sell_amount),
        buyAmount: fromNumeric(r.buy_amount),
        appData: toHex(r.app_data),
        feeAmount: fromNumeric(r.fee_amount),
        validTo: Number(r.user_valid_to),
        partiallyFillable: r.partially_fillable,
        quoteId: 0n,
      },
    }));
  }
}

/** A sent refund that the node no longer knows (dropped by a reorg): sent again, not backed off. */
class RefundDropped extends Error {
  constructor(readonly hash: Hex) {
    super(`refund transaction ${hash} was dropped`);
  }
}
