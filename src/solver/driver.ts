/**
 * The driver: turns the winning solution into a `settle` transaction, simulates it (`eth_simulateV1` from the
 * solver account against the real GPv2Settlement, refusing it when the settlement would end with less of any token
 * it touches: `settlement-balances.ts`) before anything is sent, sends it from the allow-listed solver
 * account (signed locally; the account never belongs to a trader) and follows it until it lands. Each
 * submission is recorded (`SettlementSubmissions`): its orders stay out of new auctions while it is in flight;
 * a reverted or dropped one releases them for the next auction.
 *
 * Orders are released only when their transaction can no longer land. Each submission is tracked by its nonce:
 * every transaction signed for it is recorded before it is broadcast; one still without a receipt
 * `deadlineBlocks` after it was sent is replaced (same nonce, same settlement, higher fee) while the settlement
 * still simulates, else cancelled (a 0-value transfer to itself at that nonce with a higher fee). The submission
 * is resolved by whichever of its transactions gets a receipt — a landed cancellation counts as dropped — or as
 * dropped when the account's nonce moved past it without any of them. Submissions another process left pending
 * (a restart, a new leader) are followed the same way by `recover()`: "no receipt yet" stays pending. A solution
 * that reverted on chain is not sent again (the same calldata, in any auction) for `revertCooldownBlocks`.
 *
 * @example
 *   const driver = new Driver({ client, rpcUrl, settlement, account: privateKeyToAccount(solverKey), submissions });
 *   const plan = await driver.prepare(solution, auctionId);   // plan.ok false: the simulation failed (plan.reason)
 *   if (plan.ok) { const { outcome } = await driver.submit(plan, orderUids); await outcome; }
 */
import { BaseError, createWalletClient, http, keccak256, slice, stringToHex, type Address, type Hex, type LocalAccount, type WalletClient } from 'viem';
import type { ChainClient } from '../chain/client.js';
import type { SettlementSubmissions, Submission } from './settlement-submissions.js';
import { settlementCalldata } from './encode-solution.js';
import type { Solution } from './solution.js';
import { settlementBalanceChanges, touchedTokens } from './settlement-balances.js';

export interface DriverLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface PreparedSettlement {
  ok: true;
  auctionId: number;
  solution: Solution;
  data: Hex;
  /** the gas limit sent (the estimate with headroom) */
  gas: bigint;
  /** the node's gas estimate of the settlement */
  gasEstimate: bigint;
  /** identifies the solution across auctions: keccak256 of its settle calldata without the auction id */
  solutionHash: Hex;
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
  /**
   * blocks after sending within which the transaction should be mined; after that it is replaced or cancelled
   * (default 10). An unsent submission older than this (its sender stopped) fails.
   */
  deadlineBlocks?: number;
  /** replacements (same settlement, higher fee) before a stuck submission is cancelled instead (default 1) */
  maxReplacements?: number;
  /** blocks after a revert during which the same solution (same calldata but the auction id) is not sent again (default 2 × deadlineBlocks) */
  revertCooldownBlocks?: number;
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

/** keccak256 of the settle calldata without the 8-byte auction id: the same solution in any auction. */
export function solutionHashOf(data: Hex): Hex {
  return keccak256(slice(data, 0, (data.length - 2) / 2 - 8));
}

/**
 * What identifies a solution across auctions when its amounts move with the gas price (issue 23: the network fee
 * changes the custom prices, and the AMM swap's floor, from block to block): its orders and the calls it makes
 * (target and function), whatever their amounts.
 */
export function solutionIdentity(solution: Solution): Hex {
  const uids = solution.trades.map((t) => t.order.uid).sort();
  const { pre, intra, post } = solution.interactions;
  const calls = [...pre, ...intra, ...post].map((i) => `${i.target.toLowerCase()}:${i.callData.slice(0, 10)}`);
  return keccak256(stringToHex(JSON.stringify([uids, calls])));
}

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** A transaction signed for a submission (the settlement, or a cancellation). */
interface TxRequest {
  to: Address;
  data: Hex;
  gas: bigint;
}

const bump = (fee: bigint): bigint => (fee * 5n) / 4n + 1n;

export class Driver {
  /** replaceable at run time (tests change the chain between simulation and sending through it) */
  hooks: DriverHooks;
  private readonly wallet: WalletClient;
  private sending: Promise<unknown> = Promise.resolve();
  /** submissions this driver follows itself (auction ids); `recover` leaves them alone */
  private readonly following = new Set<number>();

  constructor(private readonly options: DriverOptions) {
    this.hooks = options.hooks ?? {};
    this.wallet = createWalletClient({ account: options.account, chain: options.client.chain, transport: http(options.rpcUrl, { retryCount: 0 }) });
  }

  get solverAddress(): Address {
    return this.options.account.address.toLowerCase() as Address;
  }

  private get deadlineBlocks(): number {
    return this.options.deadlineBlocks ?? 10;
  }

  /** Encodes and simulates the settlement (eth_call, then gas estimation) from the solver account. */
  async prepare(solution: Solution, auctionId: number): Promise<Preparation> {
    const { client, settlement, account, submissions } = this.options;
    let data: Hex;
    try {
      data = settlementCalldata(solution, auctionId);
    } catch (err) {
      return { ok: false, reason: `encoding: ${errorReason(err)}` };
    }
    const solutionHash = solution.trades.some((t) => t.charges) ? solutionIdentity(solution) : solutionHashOf(data);
    const cooldown = this.options.revertCooldownBlocks ?? 2 * this.deadlineBlocks;
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    const reverted = await submissions.revertedSolution(solutionHash, head - cooldown);
    if (reverted !== null) return { ok: false, reason: `the same solution reverted on chain (auction ${reverted}); not sent again for ${cooldown} blocks` };
    try {
      // the settlement's own tokens: none may end lower than it began (settlement-balances.ts)
      const check = await settlementBalanceChanges(client, { settlement, from: account.address, data, tokens: touchedTokens(solution) });
      if (!check.settled) await client.call({ account: account.address, to: settlement, data }); // throws why it reverts
      if (check.settled && check.decreases.length > 0) {
        const [d] = check.decreases;
        return { ok: false, reason: `simulation: the settlement's balance of ${d!.token} would fall by ${d!.before - d!.after}${check.decreases.length > 1 ? ` (and ${check.decreases.length - 1} more tokens)` : ''}` };
      }
      const estimate = await client.estimateGas({ account: account.address, to: settlement, data });
      return { ok: true, auctionId, solution, data, gas: (estimate * 13n) / 10n + 20_000n, gasEstimate: estimate, solutionHash };
    } catch (err) {
      return { ok: false, reason: `simulation: ${errorReason(err)}` };
    }
  }

  /**
   * Records the submission — its orders are in flight once this resolves — then sends it and follows it in the
   * background: `outcome` resolves when it is mined, reverted, dropped or could not be sent (never rejects).
   */
  async submit(plan: PreparedSettlement, orderUids: Hex[], signal?: AbortSignal): Promise<{ outcome: Promise<SettlementOutcome> }> {
    const head = Number(await this.options.client.getBlockNumber({ cacheTime: 0 }));
    await this.options.submissions.begin(plan.auctionId, this.solverAddress, orderUids, { createdBlock: head, solutionHash: plan.solutionHash });
    this.following.add(plan.auctionId);
    const outcome = this.send(plan, head, signal).finally(() => this.following.delete(plan.auctionId));
    return { outcome };
  }

  private async send(plan: PreparedSettlement, createdBlock: number, signal?: AbortSignal): Promise<SettlementOutcome> {
    const { submissions, logger } = this.options;
    const solver = this.solverAddress;
    try {
      await this.hooks.beforeSend?.(plan);
      const sent = await this.sign(plan.auctionId, { to: this.options.settlement, data: plan.data, gas: plan.gas }, null, null, createdBlock);
      if (!sent) return { status: 'failed', reason: 'resolved by another process before it was sent' };
    } catch (err) {
      const reason = `send: ${errorReason(err)}`;
      await submissions.resolve(plan.auctionId, solver, 'failed', { reason });
      logger?.warn({ auctionId: plan.auctionId, reason }, 'driver: settlement not sent');
      return { status: 'failed', reason };
    }
    const pollMs = this.options.pollMs ?? 250;
    for (;;) {
      if (signal?.aborted) return { status: 'failed', reason: 'stopped while waiting for the receipt' }; // stays pending; followed again by recover()
      try {
        const current = await submissions.get(plan.auctionId, solver);
        if (!current) return { status: 'failed', reason: 'the submission disappeared' };
        const outcome = current.status === 'pending' ? await this.step(current, plan.data) : resolvedOutcome(current);
        if (outcome) return outcome;
      } catch {
        // a transient node or database failure: keep following
      }
      await pause(pollMs, signal);
    }
  }

  /**
   * Signs a transaction for the submission — its first (`nonce` null: the next nonce of the account) or a
   * replacement — records it, then broadcasts it. False when it was not recorded (the submission is no longer
   * pending, or an unsent one is past its time): then nothing is sent.
   */
  private async sign(auctionId: number, tx: TxRequest, nonce: number | null, previous: Fees | null, createdBlock: number | null): Promise<boolean> {
    const { client, account, submissions } = this.options;
    const broadcast = this.sending.then(async () => {
      const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
      if (nonce === null && createdBlock !== null && head > createdBlock + this.deadlineBlocks) return false;
      const n = nonce ?? (await client.getTransactionCount({ address: account.address, blockTag: 'pending' }));
      const estimate = await client.estimateFeesPerGas();
      const fees: Fees = previous
        ? { maxFeePerGas: max(bump(previous.maxFeePerGas), estimate.maxFeePerGas), maxPriorityFeePerGas: max(bump(previous.maxPriorityFeePerGas), estimate.maxPriorityFeePerGas) }
        : { maxFeePerGas: estimate.maxFeePerGas, maxPriorityFeePerGas: estimate.maxPriorityFeePerGas };
      const serialized = await account.signTransaction({ type: 'eip1559', chainId: client.chain!.id, to: tx.to, data: tx.data, gas: tx.gas, value: 0n, nonce: n, ...fees });
      const txHash = keccak256(serialized);
      const recorded = await submissions.recordAttempt(auctionId, this.solverAddress, { txHash, nonce: n, ...fees, sentBlock: head }, nonce === null);
      if (!recorded) return false;
      await this.wallet.sendRawTransaction({ serializedTransaction: serialized });
      return true;
    });
    this.sending = broadcast.catch(() => {});
    return broadcast;
  }

  /**
   * One look at a pending submission: resolved by a receipt of any of its transactions, dropped when the nonce
   * was used by none of them, replaced or cancelled when stuck past the deadline; null while it can still land.
   * `data`: the settlement calldata (else read from the node), for a replacement.
   */
  private async step(s: Submission, data: Hex | null): Promise<SettlementOutcome | null> {
    const { client, logger, account } = this.options;
    if (s.txHashes.length === 0 && s.txHash) s.txHashes = [s.txHash];
    if (s.txHashes.length === 0) return null;
    let nonce = s.nonce;
    if (nonce === null) {
      // recorded without a nonce (an older process): learn it from the node
      const tx = await client.getTransaction({ hash: s.txHashes[0]! }).catch(() => null);
      if (!tx) return this.finish(s, { status: 'dropped', txHash: s.txHashes[0]!, reason: 'unknown to the node' });
      nonce = tx.nonce;
    }
    // the nonce first: a transaction mined right after it was read still shows its receipt below
    const used = await client.getTransactionCount({ address: account.address, blockTag: 'latest' });
    for (const hash of [...s.txHashes].reverse()) {
      const receipt = await client.getTransactionReceipt({ hash }).catch((err) => {
        if (err instanceof BaseError && err.name === 'TransactionReceiptNotFoundError') return null;
        throw err;
      });
      if (!receipt) continue;
      const blockNumber = Number(receipt.blockNumber);
      if (receipt.to?.toLowerCase() !== this.options.settlement.toLowerCase()) {
        return this.finish(s, { status: 'dropped', txHash: hash, reason: `cancelled: not mined within ${this.deadlineBlocks} blocks, its nonce was used by a cancellation` }, blockNumber);
      }
      if (receipt.status === 'success') return this.finish(s, { status: 'mined', txHash: hash, blockNumber, gasUsed: receipt.gasUsed });
      return this.finish(s, { status: 'reverted', txHash: hash, blockNumber, reason: await this.revertReason(hash, receipt.blockNumber) });
    }
    if (used > nonce) return this.finish(s, { status: 'dropped', txHash: s.txHashes[s.txHashes.length - 1]!, reason: 'its nonce was used by another transaction' });
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    if (s.sentBlock === null || head <= s.sentBlock + this.deadlineBlocks) return null;
    // stuck: replace it while it still simulates, else cancel it; its orders stay in flight meanwhile
    const previous: Fees | null = s.maxFeePerGas !== null && s.maxPriorityFeePerGas !== null ? { maxFeePerGas: s.maxFeePerGas, maxPriorityFeePerGas: s.maxPriorityFeePerGas } : null;
    const settlementData = data ?? (await client.getTransaction({ hash: s.txHashes[0]! }).then((t) => t.input).catch(() => null));
    const replacements = s.txHashes.length - 1;
    let replace = false;
    let gas = 0n;
    if (settlementData && replacements < (this.options.maxReplacements ?? 1)) {
      try {
        await client.call({ account: account.address, to: this.options.settlement, data: settlementData });
        gas = ((await client.estimateGas({ account: account.address, to: this.options.settlement, data: settlementData })) * 13n) / 10n + 20_000n;
        replace = true;
      } catch {
        replace = false;
      }
    }
    const tx: TxRequest = replace ? { to: this.options.settlement, data: settlementData!, gas } : { to: account.address, data: '0x', gas: 21_000n };
    try {
      if (await this.sign(s.auctionId, tx, nonce, previous, null)) {
        logger?.warn({ auctionId: s.auctionId, nonce, action: replace ? 'replace' : 'cancel' }, `driver: settlement stuck for ${this.deadlineBlocks} blocks; ${replace ? 'replaced with a higher fee' : 'cancelled'}`);
      }
    } catch (err) {
      // e.g. the original landed meanwhile ("nonce too low"): the next look resolves it
      logger?.warn({ auctionId: s.auctionId, nonce, reason: errorReason(err) }, 'driver: could not replace a stuck settlement');
    }
    return null;
  }

  /** Writes the outcome (if the submission is still pending) and logs it. */
  private async finish(s: Submission, outcome: SettlementOutcome, cancelBlock?: number): Promise<SettlementOutcome> {
    const { submissions, logger } = this.options;
    const solver = this.solverAddress;
    if (outcome.status === 'mined') {
      await submissions.resolve(s.auctionId, solver, 'mined', { blockNumber: outcome.blockNumber, txHash: outcome.txHash });
      logger?.info({ auctionId: s.auctionId, txHash: outcome.txHash, blockNumber: outcome.blockNumber }, 'driver: settlement mined');
    } else if (outcome.status === 'reverted') {
      await submissions.resolve(s.auctionId, solver, 'reverted', { blockNumber: outcome.blockNumber, reason: outcome.reason, txHash: outcome.txHash });
      logger?.warn({ auctionId: s.auctionId, txHash: outcome.txHash, reason: outcome.reason }, 'driver: settlement reverted; its orders return to the next auction');
    } else if (outcome.status === 'dropped') {
      await submissions.resolve(s.auctionId, solver, 'dropped', { reason: outcome.reason, blockNumber: cancelBlock, txHash: outcome.txHash });
      logger?.warn({ auctionId: s.auctionId, txHash: outcome.txHash, reason: outcome.reason }, 'driver: settlement dropped; its orders return to the next auction');
    }
    return outcome;
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

  /**
   * Looks at the submissions another process (an earlier run, the previous leader) left pending: resolved by a
   * receipt, dropped when their nonce was used by none of their transactions, replaced or cancelled when stuck;
   * one without a receipt yet stays pending (its orders stay in flight). An unsent one fails only
   * `deadlineBlocks` after it was recorded — until then its sender may still send it. Runs before every auction.
   */
  async recover(): Promise<void> {
    const { client, submissions } = this.options;
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    await submissions.failUnsent(head, this.deadlineBlocks);
    for (const s of await submissions.unresolved()) {
      if (this.following.has(s.auctionId) || s.solver.toLowerCase() !== this.solverAddress) continue;
      await this.step(s, null);
    }
  }
}

function resolvedOutcome(s: Submission): SettlementOutcome {
  const txHash = s.txHash ?? ('0x' as Hex);
  switch (s.status) {
    case 'mined':
    case 'settled':
      return { status: 'mined', txHash, blockNumber: s.blockNumber ?? 0, gasUsed: 0n };
    case 'reverted':
      return { status: 'reverted', txHash, blockNumber: s.blockNumber ?? 0, reason: s.reason ?? 'reverted' };
    case 'dropped':
      return { status: 'dropped', txHash, reason: s.reason ?? 'dropped' };
    default:
      return { status: 'failed', reason: s.reason ?? 'failed' };
  }
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
