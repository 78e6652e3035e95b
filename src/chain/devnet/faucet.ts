// The devnet faucet: native ETH (a transfer from the deployer) or any listed token (minted by the deployer; WETH is
// wrapped by the deployer and transferred). Transactions go to the pool and are mined by the next block.
import { encodeFunctionData, getAddress, isAddress, parseUnits, formatUnits, type Address, type Hex } from 'viem';
import { devnetTokenAbi, weth9Abi } from './abis.js';
import { accountByRole, type DevnetDeployment, type DevnetToken } from './deployment.js';
import type { DevnetRpc } from './rpc.js';

export type FaucetErrorCode = 'InvalidAddress' | 'UnknownToken' | 'InvalidAmount' | 'AmountOutOfBounds' | 'Unavailable';

export class FaucetError extends Error {
  constructor(
    readonly code: FaucetErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'FaucetError';
  }
}

export interface FaucetRequest {
  /** Recipient (any letter case). */
  address: string;
  /** Token symbol (case-insensitive) or address; omitted, "ETH" or 0xEeee…EEeE = native ETH. */
  token?: string;
  /** A decimal string in whole token units ("1.5"), or a bigint in base units. Default: the token's default. */
  amount?: string | bigint;
}

export interface FaucetReceipt {
  status: 'success' | 'reverted';
  blockNumber: bigint;
  transactionHash: Hex;
}

export interface FaucetResult {
  hash: Hex;
  /** "ETH" for native, else the token symbol. */
  symbol: string;
  /** Token address, or the 0xEeee…EEeE sentinel for native ETH. */
  token: Address;
  recipient: Address;
  /** Base units. */
  amount: bigint;
  decimals: number;
  /** Waits until the next block has mined the transaction (default timeout 30 s). */
  waitForReceipt(timeoutMs?: number): Promise<FaucetReceipt>;
}

/** Per call, in whole units. Defaults are a useful amount for trying things; maxima are worth roughly $300k. */
export const FAUCET_LIMITS: Readonly<Record<string, { default: string; max: string }>> = {
  ETH: { default: '10', max: '100' },
  WETH: { default: '10', max: '100' },
  USDC: { default: '10000', max: '300000' },
  DAI: { default: '10000', max: '300000' },
  WBTC: { default: '0.5', max: '5' },
  COW: { default: '20000', max: '600000' },
};
const FALLBACK_LIMIT = { default: '100', max: '1000' };

export const NATIVE_TOKEN_ADDRESS: Address = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

const GAS_NATIVE = 100_000n; // enough for a contract recipient's receive()
const GAS_MINT = 120_000n;
const GAS_WETH = 80_000n;
/** a token's own transfer on a fork (proxies, blacklist checks): more than a mint on the devnet */
const GAS_TRANSFER = 250_000n;
const DEPLOYER_TOP_UP = 1_000_000n * 10n ** 18n;

export type Faucet = (request: FaucetRequest) => Promise<FaucetResult>;

export interface FaucetOptions {
  rpc: DevnetRpc;
  deployment: DevnetDeployment;
  /**
   * Fork mode: tokens cannot be minted (they are the chain's own), so `amount` is first credited to the deployer by
   * a storage write (`creditDeployer`), then transferred to the recipient in a real transaction. Unset: minted.
   */
  creditDeployer?: (token: DevnetToken, amount: bigint) => Promise<void>;
}

export function createFaucet(options: FaucetOptions): Faucet {
  const { rpc, deployment } = options;
  const deployer = accountByRole(deployment, 'deployer').address;
  const hexQ = (n: bigint | number): Hex => `0x${n.toString(16)}`;
  // Deployer transactions are sent one request at a time so nonces never collide.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const waitFor = (hash: Hex) => async (timeoutMs = 30_000): Promise<FaucetReceipt> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await rpc.request<{ status: Hex; blockNumber: Hex } | null>('eth_getTransactionReceipt', [hash]);
      if (r) return { status: r.status === '0x1' ? 'success' : 'reverted', blockNumber: BigInt(r.blockNumber), transactionHash: hash };
      if (Date.now() > deadline) throw new FaucetError('Unavailable', `faucet transaction ${hash} not mined within ${timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 100));
    }
  };

  return async function faucet(request: FaucetRequest): Promise<FaucetResult> {
    const recipient = parseRecipient(request.address);
    const token = resolveToken(deployment, request.token);
    const symbol = token ? token.symbol : 'ETH';
    const decimals = token ? token.decimals : 18;
    const amount = parseAmount(request.amount, symbol, decimals);

    const hash = await serial(async () => {
      try {
        const nonce = Number(BigInt(await rpc.request<Hex>('eth_getTransactionCount', [deployer, 'pending'])));
        const send = (tx: Record<string, string>): Promise<Hex> => rpc.request<Hex>('eth_sendTransaction', [{ from: deployer, ...tx }]);
        if (!token || token.address === deployment.contracts.weth) {
          const balance = BigInt(await rpc.request<Hex>('eth_getBalance', [deployer, 'pending']));
          if (balance < amount + 10n ** 20n) {
            await rpc.request('anvil_setBalance', [deployer, hexQ(balance + amount + DEPLOYER_TOP_UP)]);
          }
        }
        if (!token) {
          return send({ to: recipient, value: hexQ(amount), gas: hexQ(GAS_NATIVE), nonce: hexQ(nonce) });
        }
        if (token.address === deployment.contracts.weth) {
          await send({
            to: token.address,
            value: hexQ(amount),
            data: encodeFunctionData({ abi: weth9Abi, functionName: 'deposit' }),
            gas: hexQ(GAS_WETH),
            nonce: hexQ(nonce),
          });
          return send({
            to: token.address,
            data: encodeFunctionData({ abi: weth9Abi, functionName: 'transfer', args: [recipient, amount] }),
            gas: hexQ(GAS_WETH),
            nonce: hexQ(nonce + 1),
          });
        }
        if (options.creditDeployer) {
          await options.creditDeployer(token, amount);
          return send({
            to: token.address,
            data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'transfer', args: [recipient, amount] }),
            gas: hexQ(GAS_TRANSFER),
            nonce: hexQ(nonce),
          });
        }
        return send({
          to: token.address,
          data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'mint', args: [recipient, amount] }),
          gas: hexQ(GAS_MINT),
          nonce: hexQ(nonce),
        });
      } catch (err) {
        throw new FaucetError('Unavailable', `faucet could not send the transaction: ${(err as Error).message}`);
      }
    });

    return {
      hash,
      symbol,
      token: token ? token.address : NATIVE_TOKEN_ADDRESS,
      recipient,
      amount,
      decimals,
      waitForReceipt: waitFor(hash),
    };
  };
}

function parseRecipient(address: string): Address {
  if (typeof address !== 'string' || !isAddress(address, { strict: false })) {
    throw new FaucetError('InvalidAddress', `not an address: ${String(address)}`);
  }
  if (address.toLowerCase() === ZERO_ADDRESS) throw new FaucetError('InvalidAddress', 'the zero address cannot receive funds');
  return getAddress(address);
}

/** The listed token, or null for native ETH. */
function resolveToken(deployment: DevnetDeployment, token: string | undefined): DevnetToken | null {
  if (token === undefined || token === '' || token.toUpperCase() === 'ETH' || token.toLowerCase() === NATIVE_TOKEN_ADDRESS.toLowerCase()) {
    return null;
  }
  const found = deployment.tokens.find(
    (t) => t.symbol.toLowerCase() === token.toLowerCase() || t.address.toLowerCase() === token.toLowerCase(),
  );
  if (!found) {
    throw new FaucetError('UnknownToken', `unknown token ${token}; available: ETH, ${deployment.tokens.map((t) => t.symbol).join(', ')}`);
  }
  return found;
}

function parseAmount(amount: string | bigint | undefined, symbol: string, decimals: number): bigint {
  const limit = FAUCET_LIMITS[symbol] ?? FALLBACK_LIMIT;
  const max = parseUnits(limit.max, decimals);
  let value: bigint;
  if (amount === undefined) {
    value = parseUnits(limit.default, decimals);
  } else if (typeof amount === 'bigint') {
    value = amount;
  } else {
    const text = String(amount).trim();
    if (!/^\d+(\.\d+)?$/.test(text)) {
      throw new FaucetError('InvalidAmount', `amount must be a positive decimal number of ${symbol}, got "${String(amount)}"`);
    }
    const fraction = text.split('.')[1] ?? '';
    if (fraction.length > decimals) {
      throw new FaucetError('InvalidAmount', `${symbol} has ${decimals} decimals; "${text}" has more`);
    }
    value = parseUnits(text, decimals);
  }
  if (value <= 0n || value > max) {
    throw new FaucetError(
      'AmountOutOfBounds',
      `amount must be more than 0 and at most ${limit.max} ${symbol} per request, got ${formatUnits(value, decimals)}`,
    );
  }
  return value;
}
