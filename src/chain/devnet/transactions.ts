// Sending many transactions from anvil's unlocked dev accounts quickly: explicit nonces and gas (no estimation,
// no signing in JS), one JSON-RPC batch per group, blocks mined explicitly with chosen timestamps.
import { decodeFunctionResult, encodeFunctionData, type Abi, type Address, type Hex } from 'viem';
import type { DevnetRpc } from './rpc.js';

export interface DevTx {
  /** For error messages, e.g. "deploy USDC". */
  label: string;
  from: Address;
  to?: Address;
  data?: Hex;
  value?: bigint;
  gas: bigint;
  nonce: number;
}

const hex = (n: bigint | number): Hex => `0x${n.toString(16)}`;

/** Fee caps for set-up transactions: far above any base fee the devnet reaches while mining them. */
const MAX_FEE_PER_GAS = 200_000_000_000n;
const MAX_PRIORITY_FEE_PER_GAS = 1_000_000_000n;

export function toRpcTransaction(tx: DevTx): Record<string, string> {
  const out: Record<string, string> = {
    from: tx.from,
    gas: hex(tx.gas),
    nonce: hex(tx.nonce),
    maxFeePerGas: hex(MAX_FEE_PER_GAS),
    maxPriorityFeePerGas: hex(MAX_PRIORITY_FEE_PER_GAS),
  };
  if (tx.to) out.to = tx.to;
  if (tx.data) out.data = tx.data;
  if (tx.value) out.value = hex(tx.value);
  return out;
}

/** Submits the transactions (anvil signs them) in one batch; returns their hashes in order. */
export async function submitDevTransactions(rpc: DevnetRpc, txs: DevTx[]): Promise<Hex[]> {
  return rpc.batch<Hex>(txs.map((tx) => ({ method: 'eth_sendTransaction', params: [toRpcTransaction(tx)] })));
}

export interface BlockClock {
  /** Timestamp (seconds) for the next block this clock mines. */
  next(): number;
}

/** A clock for set-up blocks: `start`, `start + spacing`, ... */
export function steppingClock(start: number, spacing: number): BlockClock {
  let t = start - spacing;
  return { next: () => (t += spacing) };
}

/**
 * Sends the transactions and mines them, in order, in as few blocks as fit: the transactions are split into
 * chunks whose gas limits fit one block, and each chunk is mined by one evm_mine with the clock's next timestamp.
 * (Leaving anvil's miner to carry over what does not fit into the next block loses transactions.)
 * Returns the hashes and the number of blocks mined.
 */
export async function sendAndMine(
  rpc: DevnetRpc,
  txs: DevTx[],
  clock: BlockClock,
): Promise<{ hashes: Hex[]; blocks: number }> {
  const latest = await rpc.request<{ gasLimit: Hex }>('eth_getBlockByNumber', ['latest', false]);
  const budget = (BigInt(latest.gasLimit) * 95n) / 100n;
  const hashes: Hex[] = [];
  let blocks = 0;
  for (let i = 0; i < txs.length; ) {
    const chunk: DevTx[] = [];
    let gas = 0n;
    while (i < txs.length && (chunk.length === 0 || gas + txs[i]!.gas <= budget)) {
      gas += txs[i]!.gas;
      chunk.push(txs[i++]!);
    }
    hashes.push(...(await submitDevTransactions(rpc, chunk)));
    await rpc.request('evm_mine', [clock.next()]);
    blocks++;
  }
  const status = await rpc.request<{ pending: Hex; queued: Hex }>('txpool_status');
  if (BigInt(status.pending) !== 0n || BigInt(status.queued) !== 0n) {
    throw new Error(`devnet set-up: ${BigInt(status.pending) + BigInt(status.queued)} transactions left in the pool`);
  }
  return { hashes, blocks };
}

interface RpcReceipt {
  status: Hex;
  gasUsed: Hex;
  blockNumber: Hex;
  contractAddress: Address | null;
}

/** Checks every transaction was mined and succeeded; throws naming the first that did not. */
export async function assertAllSucceeded(rpc: DevnetRpc, txs: DevTx[], hashes: Hex[]): Promise<bigint> {
  const receipts = await rpc.batch<RpcReceipt | null>(
    hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })),
  );
  let gas = 0n;
  receipts.forEach((r, i) => {
    if (!r) throw new Error(`devnet set-up: "${txs[i]!.label}" was not mined`);
    if (r.status !== '0x1') throw new Error(`devnet set-up: "${txs[i]!.label}" reverted (tx ${hashes[i]})`);
    gas += BigInt(r.gasUsed);
  });
  return gas;
}

export interface ReadCall {
  to: Address;
  abi: Abi;
  functionName: string;
  args?: readonly unknown[];
}

/** Several eth_calls in one batch, decoded. */
export async function readBatch(rpc: DevnetRpc, calls: ReadCall[], block: Hex | 'latest' = 'latest'): Promise<unknown[]> {
  const raw = await rpc.batch<Hex>(
    calls.map((c) => ({
      method: 'eth_call',
      params: [{ to: c.to, data: encodeFunctionData({ abi: c.abi, functionName: c.functionName, args: c.args } as never) }, block],
    })),
  );
  return raw.map((data, i) => decodeFunctionResult({ abi: calls[i]!.abi, functionName: calls[i]!.functionName, data } as never));
}
