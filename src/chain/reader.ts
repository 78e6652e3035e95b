/**
 * Contract and chain reads for one chain, used by every service: ERC-20 balances and allowances (many owners
 * and tokens in few Multicall3 calls), token metadata (cached), native balances, code checks, EIP-1271
 * signature checks, gas price, block number and a shared block subscription.
 *
 * Failures: a call that reverts or returns garbage yields `null` (or `false`) for that item only; a transport
 * failure (timeout, node down) rejects, so callers never mistake an outage for "not a token" or "zero balance".
 *
 * @example
 *   const reader = new ChainReader(createChainClient({ chainId, rpcUrl, timeoutMs: 10_000 }));
 *   const [usdc] = await reader.erc20Balances(owner, [USDC]);
 */
import { encodeFunctionData, maxUint256, numberToHex, type Address, type Hex } from 'viem';
import { BlockFeed, type BlockFeedLogger, type BlockListener } from './block-feed.js';
import { MULTICALL3_ADDRESS, type ChainClient } from './client.js';
import { erc20ReadAbi } from './erc20-abi.js';
import { EIP1271_ABI, EIP1271_MAGIC_VALUE } from '../protocol/index.js';
import { aggregate3, multicall3Abi, type Call3, type CallResult } from './multicall.js';
import { isTransientRpcError } from './rpc-retry.js';
import { decodeDecimals, decodeTokenText, decodeUint256, MAX_TOKEN_NAME_CHARS, MAX_TOKEN_SYMBOL_CHARS } from './token-text.js';

/** gas an EIP-1271 `isValidSignature` check may use (a smart-contract wallet needs well under 100k) */
export const EIP1271_GAS_LIMIT = 1_000_000n;

/** `bytes4` return value decoded strictly: the magic value, left-aligned, with a clean (zero) padding. */
export function isMagicValueWord(result: unknown): boolean {
  if (typeof result !== 'string' || result.length < 2 + 64) return false;
  return result.slice(0, 66).toLowerCase() === EIP1271_MAGIC_VALUE.toLowerCase() + '0'.repeat(56);
}

/** Placeholder address CoW Protocol uses for the chain's native currency. */
const NATIVE_PLACEHOLDER = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

export interface TokenMetadata {
  /** lowercase */
  address: Address;
  /** null when `symbol()` is missing or unreadable */
  symbol: string | null;
  name: string | null;
  decimals: number;
}

export interface OwnerToken {
  owner: Address;
  token: Address;
}

export interface BalanceAndAllowance extends OwnerToken {
  /** null when `balanceOf` reverted or returned no word (not an ERC-20) */
  balance: bigint | null;
  /** null likewise; the native-currency placeholder has an unlimited allowance */
  allowance: bigint | null;
}

export interface ReadOptions {
  /** read the state at this block (all chunks read the same block) */
  blockNumber?: bigint;
}

export interface ChainReaderOptions {
  multicallAddress?: Address;
  /** calls per Multicall3 eth_call (default 500) */
  callsPerMulticall?: number;
  /** share this feed instead of creating one */
  blockFeed?: BlockFeed;
  pollingIntervalMs?: number;
  /** tokens whose metadata is kept (default 20,000) */
  metadataCacheSize?: number;
  /** and at most this many bytes of it, as estimated by `metadataBytes` (default 8 MiB) */
  metadataCacheBytes?: number;
  /** how long "not a token" is remembered (default 10 min; a contract may be deployed there later) */
  notATokenTtlMs?: number;
  logger?: BlockFeedLogger;
}

interface QueuedPair {
  owner: Address;
  token: Address;
  spender: Address;
  waiters: Array<{ resolve(value: BalanceAndAllowance): void; reject(err: unknown): void }>;
}

interface CachedMetadata {
  value: TokenMetadata | null;
  expiresAt: number;
  bytes: number;
}

/** What one cache entry costs, roughly: UTF-16 texts, the key and the address, and the objects around them. */
export function metadataBytes(value: TokenMetadata | null): number {
  const texts = value ? ((value.symbol?.length ?? 0) + (value.name?.length ?? 0)) * 2 : 0;
  return 2 * 42 * 2 + texts + 160;
}

const lower = (a: string): Address => a.toLowerCase() as Address;

export class ChainReader {
  readonly chainId: number;
  readonly blockFeed: BlockFeed;
  private readonly multicallAddress: Address;
  private readonly callsPerMulticall: number;
  private readonly metadataCache = new Map<string, CachedMetadata>();
  private readonly metadataInFlight = new Map<string, Promise<TokenMetadata | null>>();
  private readonly metadataCacheSize: number;
  private readonly metadataCacheBytes: number;
  private metadataCachedBytes = 0;
  private readonly notATokenTtlMs: number;
  /** `balanceAndAllowance` reads waiting for the next Multicall3 call, one per (owner, token, spender) */
  private queuedPairs = new Map<string, QueuedPair>();
  private pairsInFlight = false;

  constructor(
    readonly client: ChainClient,
    options: ChainReaderOptions = {},
  ) {
    this.chainId = client.chain.id;
    this.multicallAddress = options.multicallAddress ?? (client.chain.contracts?.multicall3?.address as Address | undefined) ?? MULTICALL3_ADDRESS;
    this.callsPerMulticall = options.callsPerMulticall ?? 500;
    this.metadataCacheSize = options.metadataCacheSize ?? 20_000;
    this.metadataCacheBytes = options.metadataCacheBytes ?? 8 * 1024 * 1024;
    this.notATokenTtlMs = options.notATokenTtlMs ?? 10 * 60_000;
    this.blockFeed = options.blockFeed ?? new BlockFeed(client, { pollingIntervalMs: options.pollingIntervalMs, logger: options.logger });
  }

  /** Forgets every token's cached metadata (the control API's revert: tokens deployed after the snapshot are gone). */
  clearCaches(): void {
    this.metadataCache.clear();
    this.metadataCachedBytes = 0;
  }

  private multicall(calls: Call3[], options: ReadOptions = {}): Promise<CallResult[]> {
    return aggregate3(this.client, calls, {
      multicallAddress: this.multicallAddress,
      chunkSize: this.callsPerMulticall,
      blockNumber: options.blockNumber,
    });
  }

  private balanceCall(owner: Address, token: Address): Call3 {
    if (lower(token) === NATIVE_PLACEHOLDER) {
      return { target: this.multicallAddress, callData: encodeFunctionData({ abi: multicall3Abi, functionName: 'getEthBalance', args: [owner] }) };
    }
    return { target: token, callData: encodeFunctionData({ abi: erc20ReadAbi, functionName: 'balanceOf', args: [owner] }) };
  }

  private allowanceCall(owner: Address, token: Address, spender: Address): Call3 | null {
    if (lower(token) === NATIVE_PLACEHOLDER) return null;
    return { target: token, callData: encodeFunctionData({ abi: erc20ReadAbi, functionName: 'allowance', args: [owner, spender] }) };
  }

  /** `balanceOf(owner)` of each token, in the order given (null where the call failed). */
  async erc20Balances(owner: Address, tokens: Address[], options?: ReadOptions): Promise<Array<bigint | null>> {
    const results = await this.multicall(tokens.map((token) => this.balanceCall(owner, token)), options);
    return results.map((r) => (r.success ? decodeUint256(r.returnData) : null));
  }

  /** `allowance(owner, spender)` of each token, in the order given. */
  async allowances(owner: Address, tokens: Address[], spender: Address, options?: ReadOptions): Promise<Array<bigint | null>> {
    const pairs = await this.balancesAndAllowances(tokens.map((token) => ({ owner, token })), spender, options, { balances: false });
    return pairs.map((p) => p.allowance);
  }

  /**
   * Balance and allowance for many (owner, token) pairs: two calls per pair, packed into as few Multicall3
   * calls as the chunk size allows, all at one block.
   */
  async balancesAndAllowances(
    pairs: OwnerToken[],
    spender: Address,
    options: ReadOptions = {},
    what: { balances?: boolean } = {},
  ): Promise<BalanceAndAllowance[]> {
    const withBalances = what.balances !== false;
    const calls: Call3[] = [];
    const slots: Array<{ balance: number; allowance: number }> = [];
    for (const { owner, token } of pairs) {
      const slot = { balance: -1, allowance: -1 };
      if (withBalances) {
        slot.balance = calls.length;
        calls.push(this.balanceCall(owner, token));
      }
      const allowance = this.allowanceCall(owner, token, spender);
      if (allowance) {
        slot.allowance = calls.length;
        calls.push(allowance);
      }
      slots.push(slot);
    }
    const results = await this.multicall(calls, options);
    const word = (index: number): bigint | null => {
      const r = results[index];
      return r && r.success ? decodeUint256(r.returnData) : null;
    };
    return pairs.map(({ owner, token }, i) => ({
      owner,
      token,
      balance: slots[i].balance >= 0 ? word(slots[i].balance) : null,
      allowance: slots[i].allowance >= 0 ? word(slots[i].allowance) : maxUint256,
    }));
  }

  /**
   * Balance and allowance of one (owner, token) pair at `latest`, read together with the other such reads asked for
   * meanwhile: while one read is in flight, new ones queue and go out as one Multicall3 call when it returns (a pair
   * asked for twice is read once). Every read starts after it was asked for, so none answers with state older than
   * its request; an idle reader reads at once. Order intake uses it: concurrent orders share eth_calls.
   * A transport failure rejects every read of that call.
   */
  balanceAndAllowance(owner: Address, token: Address, spender: Address): Promise<BalanceAndAllowance> {
    const key = `${lower(owner)}:${lower(token)}:${lower(spender)}`;
    return new Promise<BalanceAndAllowance>((resolve, reject) => {
      let queued = this.queuedPairs.get(key);
      if (!queued) {
        queued = { owner, token, spender, waiters: [] };
        this.queuedPairs.set(key, queued);
      }
      queued.waiters.push({ resolve, reject });
      if (!this.pairsInFlight) {
        // reads asked for in the same turn of the event loop (every request read meanwhile) go out together
        this.pairsInFlight = true;
        setImmediate(() => void this.readQueuedPairs());
      }
    });
  }

  /** Reads every queued pair (one call per spender, chunked as usual), then the pairs queued meanwhile, until none. */
  private async readQueuedPairs(): Promise<void> {
    try {
      await this.readQueuedPairsUntilNone();
    } finally {
      this.pairsInFlight = false;
    }
  }

  private async readQueuedPairsUntilNone(): Promise<void> {
    while (this.queuedPairs.size > 0) {
      const batch = [...this.queuedPairs.values()];
      this.queuedPairs = new Map();
      const bySpender = new Map<string, QueuedPair[]>();
      for (const q of batch) {
        const group = bySpender.get(lower(q.spender));
        if (group) group.push(q);
        else bySpender.set(lower(q.spender), [q]);
      }
      await Promise.all(
        [...bySpender.values()].map(async (group) => {
          try {
            const results = await this.balancesAndAllowances(group.map(({ owner, token }) => ({ owner, token })), group[0]!.spender);
            group.forEach((q, i) => q.waiters.forEach((w) => w.resolve({ ...results[i]!, owner: q.owner, token: q.token })));
          } catch (err) {
            for (const q of group) q.waiters.forEach((w) => w.reject(err));
          }
        }),
      );
    }
  }

  /**
   * Symbol, name and decimals of a token, or null if it does not answer `decimals()` (not an ERC-20).
   * Results are cached; a transport failure rejects and is not cached.
   */
  async tokenMetadata(token: Address): Promise<TokenMetadata | null> {
    const [result] = await this.tokensMetadata([token]);
    return result;
  }

  /** `tokenMetadata` for many tokens with one multicall for the uncached ones. */
  async tokensMetadata(tokens: Address[]): Promise<Array<TokenMetadata | null>> {
    const now = Date.now();
    const missing: Address[] = [];
    for (const token of tokens) {
      const key = lower(token);
      const cached = this.metadataCache.get(key);
      if (cached && cached.expiresAt > now) continue;
      if (!this.metadataInFlight.has(key) && !missing.includes(key)) missing.push(key);
    }
    if (missing.length > 0) {
      const batch = this.fetchMetadata(missing);
      missing.forEach((key, i) => {
        const one = batch.then((values) => values[i]);
        one.catch(() => {});
        this.metadataInFlight.set(key, one);
      });
      batch
        .then((values) => missing.forEach((key, i) => this.remember(key, values[i])))
        .catch(() => {})
        .finally(() => missing.forEach((key) => this.metadataInFlight.delete(key)));
    }
    return Promise.all(
      tokens.map(async (token) => {
        const key = lower(token);
        const pending = this.metadataInFlight.get(key);
        if (pending) return pending;
        return this.metadataCache.get(key)?.value ?? null;
      }),
    );
  }

  /** Estimated bytes the metadata cache holds now (see `metadataBytes`). */
  get metadataCacheUsage(): { entries: number; bytes: number } {
    return { entries: this.metadataCache.size, bytes: this.metadataCachedBytes };
  }

  private forget(key: string): void {
    const entry = this.metadataCache.get(key);
    if (!entry) return;
    this.metadataCache.delete(key);
    this.metadataCachedBytes -= entry.bytes;
  }

  private remember(key: string, value: TokenMetadata | null): void {
    this.forget(key);
    const bytes = metadataBytes(value);
    this.metadataCache.set(key, { value, expiresAt: value ? Number.POSITIVE_INFINITY : Date.now() + this.notATokenTtlMs, bytes });
    this.metadataCachedBytes += bytes;
    while (this.metadataCache.size > this.metadataCacheSize || this.metadataCachedBytes > this.metadataCacheBytes) {
      const oldest = this.metadataCache.keys().next().value;
      if (oldest === undefined) break;
      this.forget(oldest);
    }
  }

  private async fetchMetadata(tokens: Address[]): Promise<Array<TokenMetadata | null>> {
    const calls: Call3[] = [];
    for (const token of tokens) {
      for (const functionName of ['decimals', 'symbol', 'name'] as const) {
        calls.push({ target: token, callData: encodeFunctionData({ abi: erc20ReadAbi, functionName }) });
      }
    }
    const results = await this.multicall(calls);
    return tokens.map((address, i) => {
      const [decimals, symbol, name] = results.slice(i * 3, i * 3 + 3);
      const d = decimals.success ? decodeDecimals(decimals.returnData) : null;
      if (d === null) return null;
      return {
        address,
        decimals: d,
        symbol: symbol.success ? decodeTokenText(symbol.returnData, MAX_TOKEN_SYMBOL_CHARS) : null,
        name: name.success ? decodeTokenText(name.returnData, MAX_TOKEN_NAME_CHARS) : null,
      };
    });
  }

  async nativeBalance(owner: Address, options: ReadOptions = {}): Promise<bigint> {
    return this.client.getBalance({ address: owner, ...(options.blockNumber !== undefined ? { blockNumber: options.blockNumber } : {}) });
  }

  /** True when the address has contract code (including EIP-7702 delegation designators). */
  async hasCode(address: Address): Promise<boolean> {
    const code = await this.client.getCode({ address });
    return code !== undefined && code !== '0x';
  }

  /**
   * EIP-1271: does `owner` (a contract) accept `signature` for `digest`? A revert, empty or other answer is
   * false; a transport failure rejects. The call is made directly (not through Multicall3), optionally from
   * `caller` (e.g. the settlement contract, which makes this call on chain).
   */
  /**
   * EIP-1271 `isValidSignature(digest, signature)` on `owner`, run with at most EIP1271_GAS_LIMIT gas (a wallet
   * cannot make the node burn a block's worth of gas per order) and its answer decoded as the settlement's ABI
   * decoder does: at least one word whose first 4 bytes are the magic value and whose other 28 bytes are zero.
   */
  async isValidSignature1271(owner: Address, digest: Hex, signature: Hex, options: { caller?: Address } = {}): Promise<boolean> {
    const data = encodeFunctionData({ abi: EIP1271_ABI, functionName: 'isValidSignature', args: [digest, signature] });
    let result: Hex;
    try {
      result = (await this.client.request({
        method: 'eth_call',
        params: [{ to: owner, data, gas: numberToHex(EIP1271_GAS_LIMIT), ...(options.caller ? { from: options.caller } : {}) }, 'latest'],
      })) as Hex;
    } catch (error) {
      if (isTransientRpcError(error)) throw error;
      return false;
    }
    return isMagicValueWord(result);
  }

  /**
   * Does the call succeed (eth_call at `latest`, or at `blockNumber`)? A revert is false; a transport failure
   * rejects. Used to check that a hook (e.g. a permit) would really work before relying on it.
   */
  async callSucceeds(call: { to: Address; data: Hex; from?: Address; gas?: bigint }, options: ReadOptions = {}): Promise<boolean> {
    try {
      await this.client.request({
        method: 'eth_call',
        params: [
          { to: call.to, data: call.data, ...(call.from ? { from: call.from } : {}), ...(call.gas !== undefined ? { gas: `0x${call.gas.toString(16)}` as Hex } : {}) },
          options.blockNumber !== undefined ? (`0x${options.blockNumber.toString(16)}` as Hex) : 'latest',
        ],
      });
      return true;
    } catch (error) {
      if (isTransientRpcError(error)) throw error;
      return false;
    }
  }

  gasPrice(): Promise<bigint> {
    return this.client.getGasPrice();
  }

  blockNumber(): Promise<bigint> {
    return this.client.getBlockNumber({ cacheTime: 0 });
  }

  /** Calls `listener` on every new head (one shared subscription per reader); returns an unsubscribe function. */
  onBlock(listener: BlockListener, signal?: AbortSignal): () => void {
    return this.blockFeed.subscribe(listener, signal);
  }
}
