/**
 * The vocabulary of bundle simulation, shared by the simulators (first-party anvil fork, Tenderly), the
 * service that summarises and stores a run, and the routes.
 *
 * A simulator executes the transactions of a bundle in order on a private copy of the chain and reports, per
 * transaction, what happened: success, revert (with reason), rejection before execution, or "not executed"
 * because an earlier transaction failed (the sequence stops at the first failure, as Tenderly's bundle
 * endpoint does). Balance and storage changes are per transaction here; `summarizeBundle` adds them up.
 */
import type { Address, Hex } from 'viem';

/** The native asset's key in balance diffs (lowercase, as everywhere on the auxiliary API). */
export const NATIVE_ASSET: Address = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

/** One transaction of a bundle, normalised (lowercase addresses, bigint amounts). */
export interface BundleTransaction {
  from: Address;
  to: Address;
  input: Hex;
  value: bigint;
  /** gas limit; null = let the simulator choose (block gas limit, capped) */
  gas: number | null;
  /** gas price in wei; null = 0 (the run is free, as in upstream) */
  gasPrice: bigint | null;
}

/** address → token → signed amount (base units). */
export type BalanceChanges = Map<Address, Map<Address, bigint>>;

/** One storage slot that changed: 32-byte hex key and values, lowercase. */
export interface StorageChange {
  address: Address;
  key: Hex;
  original: Hex;
  updated: Hex;
}

export type TransactionOutcomeKind =
  /** executed and succeeded */
  | 'success'
  /** executed (mined on the private fork) and reverted: gas was spent, state unchanged */
  | 'reverted'
  /** refused before execution (e.g. insufficient funds for value, gas limit below intrinsic gas) */
  | 'rejected'
  /** not run: an earlier transaction of the bundle failed */
  | 'not_executed';

export interface TransactionOutcome {
  index: number;
  outcome: TransactionOutcomeKind;
  gasUsed: bigint;
  /** human-readable reason for a revert or rejection, null on success */
  revertReason: string | null;
  /** raw revert data (ABI-encoded error), when the provider exposes it */
  revertData: Hex | null;
  /** ERC-20 (Transfer, WETH Deposit/Withdrawal logs) and native value changes, gas excluded */
  balanceChanges: BalanceChanges;
  storageChanges: StorageChange[];
  /** the provider's own page for this transaction's run, when it has one (Tenderly) */
  providerLink: string | null;
}

export interface BundleRequest {
  chainId: number;
  /** a fork-capable JSON-RPC node of the chain */
  rpcUrl: string;
  /** wrapped native token whose Deposit/Withdrawal events count as mints/burns (null: none known) */
  wrappedNative: Address | null;
  transactions: BundleTransaction[];
}

export interface BundleOutcome {
  /** which simulator produced it */
  provider: string;
  /** the block whose state the bundle ran on (null when the provider does not say) */
  blockNumber: number | null;
  /** one per requested transaction, in order */
  transactions: TransactionOutcome[];
}

/** Something that can run a bundle. Implementations must leave the real chain untouched. */
export interface Simulator {
  readonly name: string;
  /** Rejects with SimulationUnavailableError / SimulationFailedError; a reverting transaction is not an error. */
  simulate(request: BundleRequest, signal: AbortSignal): Promise<BundleOutcome>;
  /** releases what it holds (e.g. idle fork processes); called by BundleSimulator.stop() */
  close?(): Promise<void>;
}

/** The provider (fork node, source RPC, Tenderly) cannot be reached, is overloaded or timed out: HTTP 502. */
export class SimulationUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SimulationUnavailableError';
  }
}

/** The simulation failed for a server-side reason (misconfigured credentials, simulator binary missing): HTTP 500. */
export class SimulationFailedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SimulationFailedError';
  }
}
