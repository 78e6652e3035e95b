/**
 * The fees of executed trades, read back as production's autopilot does (issue 23, reference fees.md §9): each
 * trade of a settlement batchbook submitted is matched to the fee record of its auction (through the submission
 * whose transaction it is) and
 * - each policy's fee is read back from the executed amounts (`feesFromExecution`), in the surplus token;
 * - `executedFee` = network + protocol + partner fees in the sell token, through the solution's uniform prices.
 * Trades of settlements batchbook did not submit have no record: no protocol fees, executedFee 0.
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { DB } from '../../db/schema.js';
import { fromNumeric, toBytes, toHex } from '../../db/codec.js';
import { feeInSellToken, feePolicyFromJson, feesFromExecution, type FeePolicyJson } from '../../protocol/index.js';

export interface ExecutedProtocolFee {
  policy: FeePolicyJson;
  amount: bigint;
  token: Address;
  /** the partner the policy came from, null for the protocol's */
  recipient: Address | null;
}

export interface TradeFees {
  orderUid: Hex;
  txHash: Hex;
  blockNumber: number;
  logIndex: number;
  protocolFees: ExecutedProtocolFee[];
  /** network + every policy's fee, in the sell token */
  executedFee: bigint;
}

interface Row {
  order_uid: Uint8Array;
  tx_hash: Uint8Array;
  block_number: number | string;
  log_index: number | string;
  sell_amount: string;
  buy_amount: string;
  kind: 'sell' | 'buy';
  o_sell: string;
  o_buy: string;
  sell_token: Uint8Array;
  buy_token: Uint8Array;
  policies: string;
  recipients: string[];
  sell_price: string;
  buy_price: string;
}

/** At most this many trades are read per request (the newest): an address's history is bounded work. */
export const MAX_FEE_ROWS = 10_000;

export class TradeFeeReader {
  constructor(private readonly deps: { chainId: number; db: Kysely<DB> }) {}

  /** The fees of every recorded trade of these orders (key `uid:txHash`). */
  async forOrders(uids: readonly Hex[]): Promise<Map<string, TradeFees>> {
    if (uids.length === 0) return new Map();
    const rows = await this.query(sql`t.order_uid in (${sql.join(uids.map((u) => toBytes(u)))})`);
    return new Map(rows.map((r) => [`${r.orderUid}:${r.txHash}`, r]));
  }

  /** Sum of the executed fees (sell token) of each order's recorded trades. */
  async executedFees(uids: readonly Hex[]): Promise<Map<Hex, bigint>> {
    const out = new Map<Hex, bigint>();
    for (const t of (await this.forOrders(uids)).values()) out.set(t.orderUid, (out.get(t.orderUid) ?? 0n) + t.executedFee);
    return out;
  }

  /** Trades with a partner-fee policy of `recipient` (lowercase), newest first. */
  async forRecipient(recipient: Address): Promise<TradeFees[]> {
    return this.query(sql`${recipient.toLowerCase()} = any(f.recipients)`);
  }

  private async query(where: ReturnType<typeof sql>): Promise<TradeFees[]> {
    const { rows } = await sql<Row>`
      select t.order_uid, t.tx_hash, t.block_number, t.log_index, t.sell_amount::text as sell_amount, t.buy_amount::text as buy_amount,
             o.kind, o.sell_amount::text as o_sell, o.buy_amount::text as o_buy, o.sell_token, o.buy_token,
             f.policies, f.recipients, f.sell_price::text as sell_price, f.buy_price::text as buy_price
      from trades t
      join orders o on o.chain_id = t.chain_id and o.uid = t.order_uid
      join competition_settlements cs on cs.chain_id = t.chain_id and (cs.tx_hash = t.tx_hash or t.tx_hash = any(cs.tx_hashes))
      join order_fee_records f on f.chain_id = t.chain_id and f.auction_id = cs.auction_id and f.order_uid = t.order_uid
      where t.chain_id = ${this.deps.chainId} and ${where}
      order by t.block_number desc, t.log_index desc
      limit ${MAX_FEE_ROWS}`.execute(this.deps.db);
    return rows.map((r) => {
      const order = { kind: r.kind, sellAmount: fromNumeric(r.o_sell), buyAmount: fromNumeric(r.o_buy) };
      const executedSell = fromNumeric(r.sell_amount);
      const executedBuy = fromNumeric(r.buy_amount);
      const json = JSON.parse(r.policies) as FeePolicyJson[];
      const amounts = feesFromExecution(order, executedSell, executedBuy, json.map(feePolicyFromJson));
      const token = toHex(r.kind === 'sell' ? r.buy_token : r.sell_token) as Address;
      return {
        orderUid: toHex(r.order_uid),
        txHash: toHex(r.tx_hash),
        blockNumber: Number(r.block_number),
        logIndex: Number(r.log_index),
        protocolFees: json.map((policy, i) => ({ policy, amount: amounts[i]!, token, recipient: r.recipients[i] ? (r.recipients[i] as Address) : null })),
        executedFee: feeInSellToken(executedSell, executedBuy, { sell: fromNumeric(r.sell_price), buy: fromNumeric(r.buy_price) }),
      };
    });
  }
}
