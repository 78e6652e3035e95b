/**
 * The driver: turns the winning solution into a `settle` transaction, simulates it (`eth_call` from the solver
 * account against the real GPv2Settlement) before anything is sent, sends it from the allow-listed solver
 * account (signed locally; the account never belongs to a trader) and follows it until it is mined or its
 * deadline passes. Each submission is recorded (`SettlementSubmissions`): its orders stay out of new auctions
 * while it is in flight; a reverted or dropped one releases them for the next auction.
 *
 * @example
 *   const driver = new Driver({ client, rpcUrl, settlement, account: privateKeyToAccount(solverKey), submissions });
 *   const plan = await driver.prepare(solution, auctionId);   // plan.ok false: the simulation failed (plan.reason)
 *   if (plan.ok) { const { outcome } = await driver.submit(plan, orderUids); await outcome; }
 */
import { BaseError, createWalletClient, http, type Address, type Hex, type LocalAccount, type WalletClient } from 'viem';
import type { ChainClient } from '../chain/client.js';
import type { SettlementSubmissions } from '../auction/settlement-submissions.js';
import { settlementCalldata } from './encode-solution.js';
import type { Solution } from './solution.js';

export interface DriverLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface PreparedSettlement {
  ok: true;
  auctionId: number;
  solution: Solution;
  data: Hex;
  gas: bigint;
}

export type Preparation = PreparedSettlement | { ok: false; reason: string };

export type SettlementOutcome =
  | { status: 'mined'; txHash: Hex; blockNumber: number; gasUsed: bigint }
  | { status: 'reverted'; txHash: Hex; blockNumber: number; reason: string }
  | { status: 'dropped'; txHash: Hex; reason: string }
  | { status: 'failed'; reason: string };

export interface DriverHooks {
  /** Called after the simulation passed and before the transaction is sent (tests use it to change the chain). */
  beforeSend?(plan: PreparedSettlement): Promise<void>;
}

export interface DriverOptions {
  client: ChainClient;
  /** where transactions are sent (the same node the client reads) */
  rpcUrl: string;
  settlement: Address;
  /** the allow-listed solver account */
  account: LocalAccount;
  submissions: SettlementSubmissions;
  logger?: DriverLogger;
  /** blocks after sending within which the transaction must be mined, else it counts as dropped (default 10) */
  deadlineBlocks?: number;
  /** receipt polling interval (default 250 ms) */
  pollMs?: number;
  hooks?: DriverHooks;
}

/** The most useful text of a viem error: the decoded revert reason, else the node's own words, at most 300 characters. */
export function errorReason(err: unknown): string {
  let text: string;
  if (err instanceof BaseError) {
    const reason = (err.walk((e) => typeof (e as { reason?: unknown }).reason === 'string') as { reason?: string } | null)?.reason;
    text = reason ?? (err.details && err.details !== err.shortMessage ? `${err.shortMessage} (${err.details})` : err.shortMessage);
  } else text = err instanceof Error ? err.message : String(err);
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

export class Driver {
  /** replaceable at run time (tests change the chain between simulation and sending through it) */
  hooks: DriverHooks;
  private readonly wallet: WalletClient;
  private sending: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DriverOptions) {
    this.hooks = options.hooks ?? {};
    this.wallet = createWalletClient({ account: options.account, chain: options.client.chain, transport: http(options.rpcUrl, { retryCount: 0 }) });
  }

  get solverAddress(): Address {
    return this.options.account.address.toLowerCase() as Address;
  }

  /** Encodes and simulates the settlement (eth_call, then gas estimation) from the solver account. */
  async prepare(solution: Solution, auctionId: number): Promise<Preparation> {
    const { client, settlement, account } = this.options;
    let data: Hex;
    try {
      data = settlementCalldata(solution, auctionId);
    } catch (err) {
      return { ok: false, reason: `encoding: ${errorReason(err)}` };
    }
    try {
      await client.call({ account: account.address, to: settlement, data });
      const estimate = await client.estimateGas({ account: account.address, to: settlement, data });
      return { ok: true, auctionId, solution, data, gas: (estimate * 13n) / 10n + 20_000n };
    } catch (err) {
      return { ok: false, reason: `simulation: ${errorReason(err)}` };
    }
  }

  /**
   * Records the submission — its orders are in flight once this resolves — then sends it and follows it in the
   * background: `outcome` resolves when it is mined, reverted, dropped or could not be sent (never rejects).
   */
  async submit(plan: PreparedSettlement, orderUids: Hex[], signal?: AbortSignal): Promise<{ outcome: Promise<SettlementOutcome> }> {
    await this.options.submissions.begin(plan.auctionId, this.solverAddress, orderUids);
    return { outcome: this.send(plan, signal) };
  }

  private async send(plan: PreparedSettlement, signal?: AbortSignal): Promise<SettlementOutcome> {
    const { client, submissions, logger } = this.options;
    const solver = this.solverAddress;
    let txHash: Hex;
    let sentAt: bigint;
    try {
      await this.hooks.beforeSend?.(plan);
      // one transaction at a time is given a nonce and broadcast; receipts are awaited in parallel
      const broadcast = this.sending.then(async () => {
        const nonce = await client.getTransactionCount({ address: this.options.account.address, blockTag: 'pending' });
        const hash = await this.wallet.sendTransaction({ account: this.options.account, chain: client.chain, to: this.options.settlement, data: plan.data, gas: plan.gas, nonce });
        return { hash, block: await client.getBlockNumber({ cacheTime: 0 }) };
      });
      this.sending = broadcast.catch(() => {});
      const sent = await broadcast;
      txHash = sent.hash;
      sentAt = sent.block;
      await submissions.sent(plan.auctionId, solver, txHash);
    } catch (err) {
      const reason = `send: ${errorReason(err)}`;
      await submissions.resolve(plan.auctionId, solver, 'failed', { reason });
      logger?.warn({ auctionId: plan.auctionId, reason }, 'driver: settlement not sent');
      return { status: 'failed', reason };
    }
    const outcome = await this.follow(txHash, sentAt, signal);
    if (outcome === null) return { status: 'failed', reason: 'stopped while waiting for the receipt' }; // stays pending; resolved at the next start
    if (outcome.status === 'mined') {
      await submissions.resolve(plan.auctionId, solver, 'mined', { blockNumber: outcome.blockNumber });
      logger?.info({ auctionId: plan.auctionId, txHash, blockNumber: outcome.blockNumber, trades: plan.solution.trades.length, solver: plan.solution.solver }, 'driver: settlement mined');
    } else if (outcome.status === 'reverted') {
      await submissions.resolve(plan.auctionId, solver, 'reverted', { blockNumber: outcome.blockNumber, reason: outcome.reason });
      logger?.warn({ auctionId: plan.auctionId, txHash, reason: outcome.reason }, 'driver: settlement reverted; its orders return to the next auction');
    } else if (outcome.status === 'dropped') {
      await submissions.resolve(plan.auctionId, solver, 'dropped', { reason: outcome.reason });
      logger?.warn({ auctionId: plan.auctionId, txHash }, 'driver: settlement dropped; its orders return to the next auction');
    }
    return outcome;
  }

  /** Waits for the receipt until `deadlineBlocks` blocks after sending; null when aborted. */
  async follow(txHash: Hex, sentAt: bigint, signal?: AbortSignal): Promise<SettlementOutcome | null> {
    const { client } = this.options;
    const deadline = sentAt + BigInt(this.options.deadlineBlocks ?? 10);
    const pollMs = this.options.pollMs ?? 250;
    for (;;) {
      if (signal?.aborted) return null;
      try {
        const receipt = await client.getTransactionReceipt({ hash: txHash }).catch((err) => {
          if (err instanceof BaseError && err.name === 'TransactionReceiptNotFoundError') return null;
          throw err;
        });
        if (receipt) {
          const blockNumber = Number(receipt.blockNumber);
          if (receipt.status === 'success') return { status: 'mined', txHash, blockNumber, gasUsed: receipt.gasUsed };
          return { status: 'reverted', txHash, blockNumber, reason: await this.revertReason(txHash, receipt.blockNumber) };
        }
        if ((await client.getBlockNumber({ cacheTime: 0 })) > deadline) return { status: 'dropped', txHash, reason: `not mined within ${this.options.deadlineBlocks ?? 10} blocks` };
      } catch {
        // a transient node failure: keep waiting
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done(): void {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Replays a reverted transaction at its block to read the revert reason (best effort). */
  private async revertReason(txHash: Hex, blockNumber: bigint): Promise<string> {
    try {
      const tx = await this.options.client.getTransaction({ hash: txHash });
      await this.options.client.call({ account: tx.from, to: tx.to!, data: tx.input, gas: tx.gas, blockNumber: blockNumber - 1n });
      return 'reverted';
    } catch (err) {
      return errorReason(err);
    }
  }

  /** Resolves submissions an earlier process left pending: mined, reverted, or dropped when the node never saw them. */
  async recover(): Promise<void> {
    const { client, submissions } = this.options;
    for (const s of await submissions.unresolved()) {
      if (!s.txHash) {
        await submissions.resolve(s.auctionId, s.solver, 'failed', { reason: 'the process stopped before sending' });
        continue;
      }
      const receipt = await client.getTransactionReceipt({ hash: s.txHash }).catch(() => null);
      if (!receipt) await submissions.resolve(s.auctionId, s.solver, 'dropped', { reason: 'not found after a restart' });
      else if (receipt.status === 'success') await submissions.resolve(s.auctionId, s.solver, 'mined', { blockNumber: Number(receipt.blockNumber) });
      else await submissions.resolve(s.auctionId, s.solver, 'reverted', { blockNumber: Number(receipt.blockNumber), reason: 'reverted' });
    }
  }
}
