/**
 * For tests of the chain layer: one ephemeral devnet (real anvil with the real contracts) per test process,
 * and raw JSON-RPC helpers for the anvil-specific calls tests need (snapshots, mining, unlocked senders).
 *
 * @example
 *   const chain = await startTestDevnet();
 *   await chain.sendAndWait([{ from, to: token, data }]);
 *   await chain.stop();
 */
import { numberToHex, type Address, type Hex } from 'viem';
import { findFreePort, startDevnet, type Devnet } from './devnet/index.js';

export interface TestTx {
  from: Address;
  to: Address;
  data?: Hex;
  value?: bigint;
  gas?: bigint;
}

export interface TestDevnet {
  devnet: Devnet;
  rpcUrl: string;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Sends from unlocked dev accounts (explicit nonces, one JSON-RPC batch) and waits until all are mined. */
  sendAndWait(txs: TestTx[]): Promise<Array<{ blockNumber: number; status: string; transactionHash: Hex }>>;
  /** Mines `count` blocks at once. */
  mine(count?: number): Promise<void>;
  blockNumber(): Promise<number>;
  /** Mints with the devnet faucet (symbol, whole units) and waits until it is mined; returns the base units. */
  mint(to: Address, symbol: string, amount: string): Promise<bigint>;
  /** Waits until `count` more blocks were mined. */
  blocks(count: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestDevnet(options: { blockTime?: number } = {}): Promise<TestDevnet> {
  const devnet = await startDevnet({ dataDir: null, port: await findFreePort(), blockTime: options.blockTime ?? 1, activity: false, historyHours: 0 });
  const rpcUrl = devnet.rpcUrl;
  let id = 1;

  async function post(body: unknown): Promise<unknown> {
    const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
    return res.json();
  }

  async function rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const reply = (await post({ jsonrpc: '2.0', id: id++, method, params })) as { result?: T; error?: { message: string } };
    if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
    return reply.result as T;
  }

  async function batch<T = unknown>(calls: Array<{ method: string; params: unknown[] }>): Promise<T[]> {
    if (calls.length === 0) return [];
    const body = calls.map((c) => ({ jsonrpc: '2.0', id: id++, method: c.method, params: c.params }));
    const replies = (await post(body)) as Array<{ id: number; result?: T; error?: { message: string } }>;
    const byId = new Map(replies.map((r) => [r.id, r]));
    return body.map((b) => {
      const r = byId.get(b.id);
      if (!r || r.error) throw new Error(`${b.method}: ${r?.error?.message ?? 'no reply'}`);
      return r.result as T;
    });
  }

  async function waitForReceipts(hashes: Hex[]) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const receipts = await batch<{ blockNumber: Hex; status: string; transactionHash: Hex } | null>(hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
      if (receipts.every((r) => r !== null)) {
        return receipts.map((r) => ({ blockNumber: Number.parseInt(r!.blockNumber, 16), status: r!.status, transactionHash: r!.transactionHash }));
      }
      if (Date.now() > deadline) throw new Error('transactions were not mined within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  // Waves of at most 500: anvil silently drops transactions beyond what its pool holds.
  async function sendAndWait(txs: TestTx[]) {
    const out: Array<{ blockNumber: number; status: string; transactionHash: Hex }> = [];
    for (let i = 0; i < txs.length; i += 500) {
      const wave = txs.slice(i, i + 500);
      const nonces = new Map<string, number>();
      for (const from of new Set(wave.map((t) => t.from.toLowerCase()))) {
        nonces.set(from, Number.parseInt(await rpc<string>('eth_getTransactionCount', [from, 'pending']), 16));
      }
      const calls = wave.map((t) => {
        const nonce = nonces.get(t.from.toLowerCase())!;
        nonces.set(t.from.toLowerCase(), nonce + 1);
        return {
          method: 'eth_sendTransaction',
          params: [
            {
              from: t.from,
              to: t.to,
              data: t.data ?? '0x',
              value: numberToHex(t.value ?? 0n),
              gas: numberToHex(t.gas ?? 300_000n),
              nonce: numberToHex(nonce),
            },
          ],
        };
      });
      out.push(...(await waitForReceipts(await batch<Hex>(calls))));
    }
    return out;
  }

  const blockNumber = async () => Number.parseInt(await rpc<string>('eth_blockNumber'), 16);
  return {
    devnet,
    rpcUrl,
    rpc,
    sendAndWait,
    async mine(count = 1) {
      await rpc('anvil_mine', [numberToHex(count)]);
    },
    blockNumber,
    async mint(to, symbol, amount) {
      const r = await devnet.faucet({ address: to, token: symbol, amount });
      await r.waitForReceipt();
      return r.amount;
    },
    async blocks(count) {
      const start = await blockNumber();
      while ((await blockNumber()) < start + count) await new Promise((r) => setTimeout(r, 100));
    },
    stop: () => devnet.stop(),
  };
}
