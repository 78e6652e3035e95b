/**
 * The first-party simulator: every bundle runs on its own short-lived anvil fork of the chain's RPC node,
 * pinned to the node's latest block, so concurrent simulations never see each other's state and the live chain
 * (and everybody else using it) is never touched — no snapshots or reverts on the shared node.
 *
 * Forks are pooled (fork-pool.ts): a fork serves one simulation at a time and before each use goes back to a
 * snapshot taken at the current block (`evm_revert`), or is reset to it with `anvil_reset` once the source has
 * moved on. A fork pooled at the block of its last run starts on the bundle while the source's head is still being
 * read (an early lease); if the head turns out to be another block, the run is discarded and made again on the
 * fork reset to the head.
 *
 * Per transaction, in order: send it from the (impersonated) sender, mine it, read the receipt; on success read
 * the `prestateTracer` diff (storage changes, native balance changes) and the logs (ERC-20 changes); on revert
 * read the `callTracer` output for the reason. The first failure stops the bundle; the transactions after it are
 * reported as not executed (the same rule as Tenderly's bundle endpoint). A bundle without gas estimates to make
 * runs the same way in a single block: the transactions sent in order and one `evm_mine`, all in one batched
 * request, then the receipts and the traces of the whole block read in another (two round trips to the fork after
 * the lease, whatever the bundle's length).
 *
 * Gas: a transaction without `gas_price` runs at gas price 0 on a fork with base fee 0, so it costs nothing (and
 * senders without ether can be simulated, as upstream does); with `gas_price` it is honoured and the sender
 * pays. Either way the native balance changes reported exclude gas costs: the fee is added back to the sender
 * and the priority fee taken back from the block's coinbase. Without `gas`, the limit is the block gas limit
 * capped at 2^24 (EIP-7825's per-transaction cap); when a gas price is given it is estimated instead (a huge
 * limit would have to be prepaid), falling back to that default when the estimate itself reverts.
 *
 * Failure mapping: the source node unreachable (before the run, or found dead when the fork misbehaves) →
 * SimulationUnavailableError (502); the anvil binary missing or the fork failing on its own →
 * SimulationFailedError (500).
 */
import { numberToHex, type Address, type Hex } from 'viem';
import { ForkStartError } from './anvil-fork.js';
import { ForkPool, type ForkLease } from './fork-pool.js';
import { RpcCallError, redact, rpcBatch, rpcCall, type RpcBatchCall } from './json-rpc.js';
import { describeRevert } from './revert-reason.js';
import {
  addBalanceChanges,
  nativeAsBalanceChanges,
  nativeChangesFromPrestate,
  storageChangesFromPrestate,
  tokenChangesFromLogs,
  type LogEntry,
  type PrestateDiff,
} from './state-changes.js';
import {
  SimulationFailedError,
  SimulationUnavailableError,
  type BalanceChanges,
  type BundleOutcome,
  type BundleRequest,
  type BundleTransaction,
  type Simulator,
  type TransactionOutcome,
} from './types.js';

export interface ForkSimulatorOptions {
  /** anvil binary (default: the installed platform package's) */
  anvilBinaryPath?: string;
  /** timeout of each JSON-RPC call to the source node and to the fork (default 20 s) */
  rpcTimeoutMs?: number;
  /** how long a fork may take to come up (default 15 s) */
  forkStartTimeoutMs?: number;
  /** forks kept ready per chain between simulations, reverted to a snapshot (or reset) before reuse (default 2; 0 = a fresh fork each time) */
  idleForks?: number;
  /** kill a fork idle this long (default 60 s) */
  idleForkTtlMs?: number;
}

/** EIP-7825 (Osaka) per-transaction gas cap; also the default limit when a transaction gives none. */
const TX_GAS_CAP = 16_777_216n;

interface Receipt {
  status: Hex;
  gasUsed: Hex;
  effectiveGasPrice?: Hex;
  blockNumber: Hex;
  logs: LogEntry[];
}

interface CallFrame {
  output?: Hex;
  error?: string;
}

export class ForkSimulator implements Simulator {
  readonly name = 'fork';
  private readonly rpcTimeoutMs: number;
  private readonly pool: ForkPool;

  constructor(options: ForkSimulatorOptions = {}) {
    this.rpcTimeoutMs = options.rpcTimeoutMs ?? 20_000;
    this.pool = new ForkPool({
      maxIdlePerSource: Math.max(0, options.idleForks ?? 2),
      idleTtlMs: options.idleForkTtlMs ?? 60_000,
      rpcTimeoutMs: this.rpcTimeoutMs,
      startOptions: { binaryPath: options.anvilBinaryPath, readyTimeoutMs: options.forkStartTimeoutMs ?? 15_000, upstreamTimeoutMs: this.rpcTimeoutMs },
    });
  }

  /** anvil forks alive for this simulator (in use or idle) */
  forks(): number {
    return this.pool.size();
  }

  /** Kills the idle forks; forks in use die with their (aborted) simulations. */
  close(): Promise<void> {
    return this.pool.close();
  }

  async simulate(request: BundleRequest, signal: AbortSignal): Promise<BundleOutcome> {
    let together = true;
    let early = true;
    for (;;) {
      try {
        return await this.run(request, signal, together, early);
      } catch (err) {
        // the fork did not mine the bundle sent in one request as one block, in order: once more, one call at a time
        if (err instanceof BundleNotMinedTogether && together) together = false;
        // the bundle ran on a fork the source has moved on from: once more, on a fork brought to the new head
        else if (err instanceof SourceMovedOn && early) early = false;
        else throw err;
      }
    }
  }

  /**
   * `together`: the bundle's transactions and the `evm_mine` that follows them in one request (see runInOneBlock).
   * `early`: a pooled fork still pinned to the block of its last run may start on the bundle before the source's
   * head is known (the pool's lease is then `confirmed` later); the run counts only if that block is the head.
   */
  private async run(request: BundleRequest, signal: AbortSignal, together: boolean, early: boolean): Promise<BundleOutcome> {
    // the pool readies an idle fork while the source's head is read
    const reading = this.sourceHead(request.rpcUrl, signal);
    reading.catch(() => undefined); // awaited below; rejections are handled there
    let lease: ForkLease;
    try {
      lease = await this.pool.acquire(request.rpcUrl, reading, signal, { early });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof SimulationUnavailableError) throw err; // the source's head could not be read
      if (err instanceof ForkStartError && err.reason === 'binary') throw new SimulationFailedError(`the simulator cannot run: ${err.message}`, { cause: err });
      if (!(await this.sourceAlive(request.rpcUrl, signal))) throw this.unreachable(request.rpcUrl, err);
      throw new SimulationUnavailableError(`could not fork chain ${request.chainId}: ${(err as Error).message}`, { cause: err });
    }
    const fork = lease.fork;
    const onAbort = () => void fork.kill();
    signal.addEventListener('abort', onAbort, { once: true });
    let healthy = false;
    try {
      // a lease taken before the head was known: the bundle runs while it is read (a failed read ends the run at once)
      const [ran, atHead] = await Promise.all([this.execute(lease, request, signal, together), lease.confirmed ?? true]);
      if (!atHead) {
        healthy = true; // the fork is fine; the pool brings it to the new head next time
        throw new SourceMovedOn();
      }
      const head = await reading;
      healthy = true;
      return { provider: this.name, blockNumber: Number(head ?? ran.blockNumber), transactions: ran.transactions };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof SimulationFailedError || err instanceof SimulationUnavailableError || err instanceof SourceMovedOn) throw err;
      if (err instanceof BundleNotMinedTogether) {
        healthy = true; // the fork answered as a fork does: back to the pool, and to its snapshot for the next run
        throw err;
      }
      if (!(await this.sourceAlive(request.rpcUrl, signal))) throw this.unreachable(request.rpcUrl, err);
      throw new SimulationFailedError(`the fork node failed: ${(err as Error).message}`, { cause: err });
    } finally {
      signal.removeEventListener('abort', onAbort);
      await lease.release(healthy && !signal.aborted);
    }
  }

  /** The bundle on the leased fork: the outcomes, and the fork's block (the outcome's block when the source's head is unknown). */
  private async execute(lease: ForkLease, request: BundleRequest, signal: AbortSignal, together: boolean): Promise<{ blockNumber: bigint; transactions: TransactionOutcome[] }> {
    const fork = lease.fork;
    const call = <T>(method: string, params: unknown[]) => rpcCall<T>(fork.url, method, params, { signal, timeoutMs: this.rpcTimeoutMs });
    // the pool read the fork's latest block when it pinned it; a lease at that block finds it unchanged
    const block = lease.block ?? (await call<{ number: Hex; gasLimit: Hex }>('eth_getBlockByNumber', ['latest', false]));
    const blockGas = BigInt(block.gasLimit);
    const defaultGas = blockGas < TX_GAS_CAP ? blockGas : TX_GAS_CAP;
    // without gas estimates to make, the whole bundle is mined in one block: a few round trips, not four per transaction
    if (request.transactions.every((tx) => tx.gas !== null || (tx.gasPrice ?? 0n) === 0n)) {
      const batch = (calls: readonly RpcBatchCall[]) => rpcBatch(fork.url, calls, { signal, timeoutMs: this.rpcTimeoutMs });
      const transactions = await this.runInOneBlock(call, batch, request, blockGas, defaultGas, signal, together);
      return { blockNumber: BigInt(block.number), transactions };
    }
    const outcomes: TransactionOutcome[] = [];
    let failed = false;
    for (const [index, tx] of request.transactions.entries()) {
      if (failed) {
        outcomes.push(notExecuted(index));
        continue;
      }
      const outcome = await this.runTransaction(call, request, tx, index, defaultGas, signal);
      outcomes.push(outcome);
      if (outcome.outcome !== 'success') failed = true;
    }
    return { blockNumber: BigInt(block.number), transactions: outcomes };
  }

  /**
   * The bundle in one block: each transaction sent in order (the fork mines first-in first-out), one `evm_mine`,
   * then the receipts and the traces of all of them at once, in one request (`eth_getBlockReceipts`,
   * `debug_traceBlockByNumber`: reads of the mined block, which nothing changes any more). The first transaction
   * that is refused or reverts ends the bundle as in the one-by-one path: what ran after it in the block is
   * reported as not executed (it cannot have changed what ran before it).
   *
   * `together`: the transactions and the `evm_mine` go in one request. The node runs the calls of a batch
   * concurrently, but anvil runs each send to its end before it starts the next call, so the block is mined
   * after all of them, in order; the answer is checked, and a block that does not hold the bundle as sent rejects
   * with `BundleNotMinedTogether` (the caller runs it again, one call at a time), as does a refused send (the sends
   * after it went out with it, and a refusal is rare enough to be confirmed the one-by-one way).
   */
  private async runInOneBlock(
    call: <T>(method: string, params: unknown[]) => Promise<T>,
    batch: (calls: readonly RpcBatchCall[]) => Promise<unknown[]>,
    request: BundleRequest,
    blockGas: bigint,
    defaultGas: bigint,
    signal: AbortSignal,
    together: boolean,
  ): Promise<TransactionOutcome[]> {
    const txs = request.transactions;
    const gases = txs.map((tx) => (tx.gas !== null ? BigInt(tx.gas) : defaultGas));
    const total = gases.reduce((a, b) => a + b, 0n);
    // the block must hold the whole bundle; each transaction alone fits the current limit unless it asks for more,
    // and then the new limit must be in place before it is sent
    let raiseLimit: RpcBatchCall | null = total > blockGas ? ['evm_setBlockGasLimit', [numberToHex(total)]] : null;
    if (raiseLimit && gases.some((gas) => gas > blockGas)) {
      await call(raiseLimit[0], raiseLimit[1]);
      raiseLimit = null;
    }
    const sent: Array<{ hash: Hex } | { refused: TransactionOutcome }> = [];
    const sendOf = (tx: BundleTransaction, index: number): RpcBatchCall => ['eth_sendTransaction', [{ from: tx.from, to: tx.to, data: tx.input, value: numberToHex(tx.value), gasPrice: numberToHex(tx.gasPrice ?? 0n), gas: numberToHex(gases[index]!) }]];
    // sent and mined in one request: the answers, in the order of the calls (the limit, the sends, the mine)
    let answers: unknown[] | null = null;
    if (together) {
      answers = await batch([...(raiseLimit ? [raiseLimit] : []), ...txs.map(sendOf), ['evm_mine', []]]);
      if (raiseLimit) {
        const limitSet = answers.shift();
        if (limitSet instanceof RpcCallError) throw limitSet;
        raiseLimit = null;
      }
      const mined = answers.pop();
      if (mined instanceof RpcCallError) throw mined;
    }
    for (const [index, tx] of txs.entries()) {
      const send = sendOf(tx, index);
      let answer: unknown;
      if (answers) {
        answer = answers[index];
        if (answer instanceof RpcCallError) throw new BundleNotMinedTogether();
      } else if (raiseLimit) {
        // independent of each other, both before evm_mine: one request
        const [limitSet, sendAnswer] = await batch([raiseLimit, send]);
        if (limitSet instanceof RpcCallError) throw limitSet;
        raiseLimit = null;
        answer = sendAnswer;
      } else {
        answer = await call<Hex>(send[0], send[1]).catch((err: unknown) => (err instanceof RpcCallError ? err : Promise.reject(err)));
      }
      if (!(answer instanceof RpcCallError)) {
        sent.push({ hash: answer as Hex });
        continue;
      }
      const err = answer;
      if (!(await this.sourceAlive(request.rpcUrl, signal))) throw this.unreachable(request.rpcUrl, err);
      const data = typeof err.data === 'string' && /^0x[0-9a-fA-F]*$/.test(err.data) && err.data.length > 2 ? (err.data as Hex) : null;
      sent.push({ refused: { ...emptyOutcome(index, 'rejected'), revertReason: data ? describeRevert(data) : err.rpcMessage, revertData: data } });
      break;
    }
    const hashes = sent.flatMap((s) => ('hash' in s ? [s.hash] : []));
    let receipts: Array<Receipt & { transactionHash: Hex }> = [];
    let traces: Array<PrestateDiff | null> = [];
    // the block itself only matters for a gas price above 0 (its coinbase and base fee)
    let minedIn: { miner: Address; baseFeePerGas?: Hex } | null = null;
    if (hashes.length > 0) {
      if (!together) await call('evm_mine', []);
      const paid = txs.some((tx, index) => index < hashes.length && (tx.gasPrice ?? 0n) > 0n);
      const answers = await batch([
        ['eth_getBlockReceipts', ['latest']],
        ['debug_traceBlockByNumber', ['latest', { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }]],
        ...(paid ? [['eth_getBlockByNumber', ['latest', false]] as RpcBatchCall] : []),
      ]);
      const failed = answers.find((a) => a instanceof RpcCallError);
      if (failed) throw failed;
      receipts = (answers[0] ?? []) as typeof receipts;
      traces = ((answers[1] ?? []) as Array<{ result?: PrestateDiff } | null>).map((t) => t?.result ?? null);
      minedIn = paid ? (answers[2] as typeof minedIn) : null;
    }
    // the mined block holds exactly the bundle's transactions, in the order they were sent
    if (together && (receipts.length !== hashes.length || hashes.some((hash, i) => receipts[i]!.transactionHash !== hash))) throw new BundleNotMinedTogether();
    hashes.forEach((hash, i) => {
      if (!receipts[i]) throw new SimulationFailedError(`transaction ${i} was not mined on the fork`);
      if (receipts[i]!.transactionHash !== hash) throw new SimulationFailedError('the fork mined the bundle out of order');
    });
    if (receipts.length !== hashes.length || traces.length !== hashes.length) throw new SimulationFailedError('the fork mined other transactions with the bundle');
    // the outcome of each transaction up to the first failure
    const lastRun = receipts.findIndex((r) => BigInt(r.status) !== 1n);
    const revertFrame = lastRun < 0 ? null : await call<CallFrame>('debug_traceTransaction', [hashes[lastRun]!, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }]);
    if (!minedIn && receipts.some((r) => BigInt(r.effectiveGasPrice ?? '0x0') > 0n)) minedIn = await call<{ miner: Address; baseFeePerGas?: Hex }>('eth_getBlockByNumber', [receipts[0]!.blockNumber, false]);
    const outcomes: TransactionOutcome[] = [];
    for (let index = 0; index < txs.length; index++) {
      const s = sent[index];
      if (outcomes.length > 0 && outcomes[outcomes.length - 1]!.outcome !== 'success') {
        outcomes.push(notExecuted(index));
        continue;
      }
      if (!s) {
        outcomes.push(notExecuted(index));
        continue;
      }
      if ('refused' in s) {
        outcomes.push(s.refused);
        continue;
      }
      const receipt = receipts[index]!;
      const gasUsed = BigInt(receipt.gasUsed);
      if (index === lastRun) {
        const frame = revertFrame!;
        const data = frame.output && frame.output !== '0x' ? (frame.output.toLowerCase() as Hex) : null;
        const reason = data ? describeRevert(data) : frame.error && frame.error !== 'execution reverted' ? frame.error : describeRevert(null);
        outcomes.push({ ...emptyOutcome(index, 'reverted'), gasUsed, revertReason: reason, revertData: data });
        continue;
      }
      const trace = traces[index];
      if (!trace) throw new SimulationFailedError(`the fork could not trace transaction ${index}`);
      const native = nativeChangesFromPrestate(trace);
      const effectivePrice = BigInt(receipt.effectiveGasPrice ?? numberToHex(txs[index]!.gasPrice ?? 0n));
      if (effectivePrice > 0n && minedIn) {
        const tip = effectivePrice - BigInt(minedIn.baseFeePerGas ?? '0x0');
        adjust(native, txs[index]!.from, gasUsed * effectivePrice);
        adjust(native, minedIn.miner.toLowerCase() as Address, -gasUsed * tip);
      }
      const balanceChanges: BalanceChanges = tokenChangesFromLogs(receipt.logs, request.wrappedNative);
      addBalanceChanges(balanceChanges, nativeAsBalanceChanges(native));
      outcomes.push({ ...emptyOutcome(index, 'success'), gasUsed, balanceChanges, storageChanges: storageChangesFromPrestate(trace) });
    }
    return outcomes;
  }

  private async runTransaction(
    call: <T>(method: string, params: unknown[]) => Promise<T>,
    request: BundleRequest,
    tx: BundleTransaction,
    index: number,
    defaultGas: bigint,
    signal: AbortSignal,
  ): Promise<TransactionOutcome> {
    const gasPrice = tx.gasPrice ?? 0n;
    const base = { from: tx.from, to: tx.to, data: tx.input, value: numberToHex(tx.value), gasPrice: numberToHex(gasPrice) };
    let gas: bigint;
    if (tx.gas !== null) gas = BigInt(tx.gas);
    else if (gasPrice === 0n) gas = defaultGas;
    else {
      try {
        gas = BigInt(await call<Hex>('eth_estimateGas', [base]));
      } catch (err) {
        if (!(err instanceof RpcCallError)) throw err;
        gas = defaultGas;
      }
    }

    let hash: Hex;
    try {
      hash = await call<Hex>('eth_sendTransaction', [{ ...base, gas: numberToHex(gas) }]);
    } catch (err) {
      if (!(err instanceof RpcCallError)) throw err;
      // a refusal may really be the fork failing to read the source node
      if (!(await this.sourceAlive(request.rpcUrl, signal))) throw this.unreachable(request.rpcUrl, err);
      const data = typeof err.data === 'string' && /^0x[0-9a-fA-F]*$/.test(err.data) && err.data.length > 2 ? (err.data as Hex) : null;
      return { ...emptyOutcome(index, 'rejected'), revertReason: data ? describeRevert(data) : err.rpcMessage, revertData: data };
    }
    await call('evm_mine', []);
    const receipt = await call<Receipt | null>('eth_getTransactionReceipt', [hash]);
    if (!receipt) throw new SimulationFailedError(`transaction ${index} was not mined on the fork`);
    const gasUsed = BigInt(receipt.gasUsed);

    if (BigInt(receipt.status) !== 1n) {
      const frame = await call<CallFrame>('debug_traceTransaction', [hash, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }]);
      const data = frame.output && frame.output !== '0x' ? (frame.output.toLowerCase() as Hex) : null;
      const reason = data ? describeRevert(data) : frame.error && frame.error !== 'execution reverted' ? frame.error : describeRevert(null);
      return { ...emptyOutcome(index, 'reverted'), gasUsed, revertReason: reason, revertData: data };
    }

    const trace = await call<PrestateDiff>('debug_traceTransaction', [hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }]);
    const native = nativeChangesFromPrestate(trace);
    const effectivePrice = BigInt(receipt.effectiveGasPrice ?? numberToHex(gasPrice));
    if (effectivePrice > 0n) {
      // take gas out of the native changes: the fee back to the sender, the priority fee back from the coinbase
      const minedIn = await call<{ miner: Address; baseFeePerGas?: Hex }>('eth_getBlockByNumber', [receipt.blockNumber, false]);
      const tip = effectivePrice - BigInt(minedIn.baseFeePerGas ?? '0x0');
      adjust(native, tx.from, gasUsed * effectivePrice);
      adjust(native, minedIn.miner.toLowerCase() as Address, -gasUsed * tip);
    }
    const balanceChanges: BalanceChanges = tokenChangesFromLogs(receipt.logs, request.wrappedNative);
    addBalanceChanges(balanceChanges, nativeAsBalanceChanges(native));
    return {
      ...emptyOutcome(index, 'success'),
      gasUsed,
      balanceChanges,
      storageChanges: storageChangesFromPrestate(trace),
    };
  }

  /** The source's latest block (the fork is pinned to it); null for a WebSocket source, which anvil reads itself. */
  private async sourceHead(url: string, signal: AbortSignal): Promise<bigint | null> {
    if (!/^https?:/i.test(url)) return null;
    try {
      return BigInt(await rpcCall<Hex>(url, 'eth_blockNumber', [], { signal, timeoutMs: this.rpcTimeoutMs }));
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw this.unreachable(url, err);
    }
  }

  private async sourceAlive(url: string, signal: AbortSignal): Promise<boolean> {
    if (!/^https?:/i.test(url)) return true;
    try {
      await rpcCall<Hex>(url, 'eth_blockNumber', [], { signal, timeoutMs: Math.min(this.rpcTimeoutMs, 5_000) });
      return true;
    } catch {
      if (signal.aborted) throw signal.reason;
      return false;
    }
  }

  private unreachable(url: string, cause: unknown): SimulationUnavailableError {
    const detail = cause instanceof Error ? cause.message : String(cause);
    return new SimulationUnavailableError(`the chain's RPC node (${redact(url)}) is unavailable: ${detail}`, { cause });
  }
}

/** A run started before the source's head was known, on a fork at a block the source has moved on from. */
class SourceMovedOn extends Error {
  constructor() {
    super("the fork's block is no longer the source's head");
    this.name = 'SourceMovedOn';
  }
}

/** The bundle sent in one request did not come out as one block holding it in order. */
class BundleNotMinedTogether extends Error {
  constructor() {
    super('the fork did not mine the bundle sent in one request as one block');
    this.name = 'BundleNotMinedTogether';
  }
}

function adjust(native: Map<Address, bigint>, address: Address, delta: bigint): void {
  const key = address.toLowerCase() as Address;
  const next = (native.get(key) ?? 0n) + delta;
  if (next === 0n) native.delete(key);
  else native.set(key, next);
}

function emptyOutcome(index: number, outcome: TransactionOutcome['outcome']): TransactionOutcome {
  return { index, outcome, gasUsed: 0n, revertReason: null, revertData: null, balanceChanges: new Map(), storageChanges: [], providerLink: null };
}

export function notExecuted(index: number): TransactionOutcome {
  return emptyOutcome(index, 'not_executed');
}
