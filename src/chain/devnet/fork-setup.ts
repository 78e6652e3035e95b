// What fork mode does to a fresh fork (issue 20), on the fork only — the upstream only ever sees anvil's reads:
// the canonical CoW contracts used as found (the settling account allow-listed by impersonating the allow-list's
// manager) or deployed where absent; the listed tokens and the chain's Uniswap-V2 pairs among them; dev accounts
// funded by storage writes and approved; then everything the node relies on pinned into the fork's own state, so
// that a restart without the upstream finds it (anvil's saved state keeps only what was written or mined).
import {
  concatHex,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  maxUint256,
  parseAbi,
  parseEther,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { allowListAuthenticatorAbi, devnetTokenAbi, settlementAbi, uniswapV2FactoryAbi, uniswapV2PairAbi, uniswapV2RouterAbi, weth9Abi } from './abis.js';
import { deriveDevnetAccounts } from './accounts.js';
import { loadDevnetArtifacts, type DevnetArtifacts } from './artifacts.js';
import {
  AUTHENTICATOR_ADDRESS,
  BALANCER_VAULT_ADDRESS,
  CREATE2_DEPLOYER_ADDRESS,
  HOOKS_TRAMPOLINE_ADDRESS,
  MULTICALL3_ADDRESS,
  SETTLEMENT_ADDRESS,
  SETTLEMENT_SALT,
  type DevnetAccount,
  type DevnetDeployment,
  type DevnetPool,
  type DevnetRole,
  type DevnetToken,
} from './deployment.js';
import { installHooksTrampoline } from './deploy.js';
import type { DevnetRpc } from './rpc.js';
import { setTokenBalance, TokenBalanceSlotError } from './token-balance-slot.js';
import { assertAllSucceeded, readBatch, sendAndMine, steppingClock, type BlockClock, type DevTx } from './transactions.js';
import { decodeDecimals, decodeTokenText } from '../token-text.js';
import { knownAmm, knownMajorTokens, knownUsdStables } from '../amm-registry.js';
import { networkByChainId } from '../../protocol/networks.js';
import { ETHFLOW_PRODUCTION_ADDRESSES } from '../../protocol/ethflow.js';
import { domainSeparator } from '../../protocol/order-domain.js';

const hexQ = (n: bigint | number): Hex => `0x${n.toString(16)}`;
const lower = (a: string): Address => a.toLowerCase() as Address;

const authenticatorAbi = parseAbi([
  'function manager() view returns (address)',
  'function isSolver(address) view returns (bool)',
  'function addSolver(address solver)',
]);
const relayerAbi = parseAbi(['function transferFromAccounts((address account, address token, uint256 amount, bytes32 balance)[] transfers)']);
const settlementReadAbi = parseAbi(['function filledAmount(bytes) view returns (uint256)']);

export interface ForkSetupLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface ForkSetupOptions {
  chainId: number;
  /** FORK_TOKENS: listed besides the chain's wrapped native token, USD stablecoins and majors */
  extraTokens: Address[];
  log: ForkSetupLog;
  artifacts?: DevnetArtifacts;
}

export interface ForkSetupResult {
  deployment: DevnetDeployment;
  /** the canonical CoW contracts were absent on the upstream and were deployed on the fork */
  deployedCow: boolean;
}

/** Native coin given to each dev account (their fork balances are set, whatever they hold upstream). */
const DEV_NATIVE = parseEther('10000');
/** Worth of each listed token given to the traders, in wrapped-native units (converted at the pool's price). */
const TRADER_WORTH_IN_NATIVE = 100n;
/** The market bot: far more than the traders, so its swaps never run short. */
const BOT_WORTH_IN_NATIVE = 2_000n;
/** Tokens without a pool against the wrapped native token: this many whole units. */
const UNPRICED_UNITS = 1_000_000n;

export async function setUpFork(rpc: DevnetRpc, options: ForkSetupOptions): Promise<ForkSetupResult> {
  const { chainId, log } = options;
  const artifacts = options.artifacts ?? loadDevnetArtifacts();
  const accounts = deriveDevnetAccounts();
  const role = (r: DevnetRole): DevnetAccount => accounts.find((a) => a.role === r)!;
  const deployer = role('deployer').address;
  const solver = role('solver').address;
  const bot = role('market-bot').address;
  const traders = accounts.filter((a) => a.role === 'trader').map((a) => a.address);
  const latest = await rpc.request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  const now = Math.max(Math.floor(Date.now() / 1000), Number(BigInt(latest.timestamp)) + 1);
  await rpc.request('evm_setTime', [now]);
  const clock = steppingClock(now + 1, 1);

  // dev accounts: plain accounts with native coin on the fork (a dev account may carry code upstream, e.g. an
  // EIP-7702 delegation someone set on a public chain: cleared here, on the fork only)
  await rpc.batch(accounts.flatMap((a) => [
    { method: 'anvil_setCode', params: [a.address, '0x'] },
    { method: 'anvil_setBalance', params: [a.address, hexQ(DEV_NATIVE)] },
  ]));

  // ---- the CoW contracts: as found, or deployed as the devnet does --------------------------------------------
  const settlementCode = await rpc.request<Hex>('eth_getCode', [SETTLEMENT_ADDRESS, 'latest']);
  const deployedCow = settlementCode.length <= 2;
  if (deployedCow) await deployCowContracts(rpc, { deployer, solver, clock, artifacts });
  const [separator, vaultRelayer, authenticator] = (await readBatch(rpc, [
    { to: SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'domainSeparator' },
    { to: SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'vaultRelayer' },
    { to: SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'authenticator' },
  ])) as [Hex, Address, Address];
  if (separator !== domainSeparator(chainId, SETTLEMENT_ADDRESS)) {
    throw new Error(`fork: the settlement at ${SETTLEMENT_ADDRESS} has domain separator ${separator}, not the canonical one of chain ${chainId}`);
  }
  if (!deployedCow) await allowListSolver(rpc, authenticator, solver, clock, log);

  if ((await rpc.request<Hex>('eth_getCode', [MULTICALL3_ADDRESS, 'latest'])).length <= 2) {
    await rpc.request('anvil_setCode', [MULTICALL3_ADDRESS, artifacts.multicall3.deployedBytecode]);
  }
  await installHooksTrampoline(rpc, artifacts);

  // ---- tokens: the wrapped native token, USD stablecoins, majors and FORK_TOKENS — those with code --------------
  let wrapped = networkByChainId(chainId)?.wrappedNativeToken ?? null;
  if (!wrapped || (await rpc.request<Hex>('eth_getCode', [wrapped, 'latest'])).length <= 2) {
    wrapped = await deployWrappedNative(rpc, deployer, clock, artifacts);
    log.warn(`fork: chain ${chainId} has no known wrapped native token with code; deployed WETH9 at ${wrapped} on the fork`);
  }
  const candidates = [...new Set([wrapped, ...knownUsdStables(chainId), ...knownMajorTokens(chainId), ...options.extraTokens].map(lower))];
  const tokens: DevnetToken[] = [];
  for (const address of candidates) {
    const token = await readToken(rpc, address);
    if (token) tokens.push(token);
    else if (options.extraTokens.some((t) => lower(t) === address)) log.warn(`fork: FORK_TOKENS ${address} is not an ERC-20 on chain ${chainId} (no code, symbol or decimals); not listed`);
  }

  // ---- the chain's Uniswap-V2 pairs among them ------------------------------------------------------------------
  const amm = knownAmm(chainId);
  const ammLive = amm !== null && (await rpc.request<Hex>('eth_getCode', [amm.factory, 'latest'])).length > 2;
  const pools: DevnetPool[] = [];
  if (ammLive) {
    const pairs: Array<[DevnetToken, DevnetToken]> = [];
    for (let i = 0; i < tokens.length; i++) for (let j = i + 1; j < tokens.length; j++) pairs.push([tokens[i]!, tokens[j]!]);
    const found = (await readBatch(rpc, pairs.map(([a, b]) => ({ to: amm.factory, abi: uniswapV2FactoryAbi, functionName: 'getPair', args: [a.address, b.address] })))) as Address[];
    pairs.forEach(([a, b], i) => {
      if (found[i] === zeroAddress) return;
      const [t0, t1] = lower(a.address) < lower(b.address) ? [a, b] : [b, a];
      pools.push({ address: getAddress(found[i]!), token0: t0.address, token1: t1.address });
    });
  } else {
    log.warn(`fork: no known Uniswap-V2 deployment with code on chain ${chainId}: no pools, prices or AMM routing`);
  }

  // ---- dev accounts: every listed token by storage writes, approvals by transactions ----------------------------
  const worth = await nativeWorth(rpc, tokens, pools, lower(wrapped));
  for (const token of tokens) {
    try {
      for (const holder of traders) await setTokenBalance(rpc, token.address, holder, worth(token, TRADER_WORTH_IN_NATIVE));
      await setTokenBalance(rpc, token.address, bot, worth(token, BOT_WORTH_IN_NATIVE));
    } catch (err) {
      // a token whose balances are computed (rebasing, shares) is listed but cannot be funded by a storage write
      if (!(err instanceof TokenBalanceSlotError)) throw err;
      log.warn(`fork: ${token.symbol} (${token.address}) is listed but not funded: ${err.message}`);
    }
  }
  const approvals: DevTx[] = [];
  const nonces = new Map<Address, number>();
  for (const a of [...traders, bot]) nonces.set(a, Number(BigInt(await rpc.request<Hex>('eth_getTransactionCount', [a, 'latest']))));
  const approve = (from: Address, token: Address, spender: Address): void => {
    const nonce = nonces.get(from)!;
    nonces.set(from, nonce + 1);
    approvals.push({ label: `approve ${spender} for ${token} by ${from}`, from, to: token, gas: 120_000n, nonce, data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'approve', args: [spender, maxUint256] }) });
  };
  for (const token of tokens) {
    for (const trader of traders) approve(trader, token.address, vaultRelayer);
    if (ammLive) approve(bot, token.address, amm.router);
  }
  const mined = await sendAndMine(rpc, approvals, clock);
  await assertAllSucceeded(rpc, approvals, mined.hashes);

  const deployment: DevnetDeployment = {
    contracts: {
      settlement: SETTLEMENT_ADDRESS,
      vaultRelayer: getAddress(vaultRelayer),
      authenticator: getAddress(authenticator),
      weth: getAddress(wrapped),
      ammFactory: ammLive ? getAddress(amm.factory) : zeroAddress,
      ammRouter: ammLive ? getAddress(amm.router) : zeroAddress,
      multicall3: MULTICALL3_ADDRESS,
      // the devnet's demo smart wallet is not deployed on a fork
      smartWallet: zeroAddress,
      // the chain's production eth-flow contract (none on a chain CoW does not serve)
      ethFlow: ETHFLOW_PRODUCTION_ADDRESSES[chainId]?.[0] ?? zeroAddress,
      hooksTrampoline: HOOKS_TRAMPOLINE_ADDRESS,
    },
    tokens,
    pools,
    accounts,
  };
  await pinForkState(rpc, deployment, log);
  return { deployment, deployedCow };
}

/** Allow-lists `solver` on the fork by impersonating the allow-list's manager (funded first: it may be a contract wallet without ether). */
async function allowListSolver(rpc: DevnetRpc, authenticator: Address, solver: Address, clock: BlockClock, log: ForkSetupLog): Promise<void> {
  const [listed, manager] = (await readBatch(rpc, [
    { to: authenticator, abi: authenticatorAbi, functionName: 'isSolver', args: [solver] },
    { to: authenticator, abi: authenticatorAbi, functionName: 'manager' },
  ])) as [boolean, Address];
  if (listed) return;
  const balance = BigInt(await rpc.request<Hex>('eth_getBalance', [manager, 'latest']));
  await rpc.request('anvil_setBalance', [manager, hexQ(balance + parseEther('1'))]);
  await rpc.request('anvil_impersonateAccount', [manager]);
  try {
    const nonce = Number(BigInt(await rpc.request<Hex>('eth_getTransactionCount', [manager, 'latest'])));
    const tx: DevTx = { label: `addSolver(${solver}) as the allow-list manager ${manager}`, from: manager, to: authenticator, gas: 200_000n, nonce, data: encodeFunctionData({ abi: authenticatorAbi, functionName: 'addSolver', args: [solver] }) };
    const mined = await sendAndMine(rpc, [tx], clock);
    await assertAllSucceeded(rpc, [tx], mined.hashes);
  } finally {
    await rpc.request('anvil_stopImpersonatingAccount', [manager]);
    await rpc.request('anvil_setBalance', [manager, hexQ(balance)]);
  }
  const [now] = (await readBatch(rpc, [{ to: authenticator, abi: authenticatorAbi, functionName: 'isSolver', args: [solver] }])) as [boolean];
  if (!now) throw new Error(`fork: ${solver} is still not an allow-listed solver after addSolver from the manager ${manager}`);
  log.info(`fork: allow-listed the settling account ${solver} on the fork (as the allow-list manager ${manager})`);
}

/** The canonical CoW contracts where the upstream has none: the devnet's recipe (allow-list code, CREATE2 settlement). */
async function deployCowContracts(rpc: DevnetRpc, o: { deployer: Address; solver: Address; clock: BlockClock; artifacts: DevnetArtifacts }): Promise<void> {
  if ((await rpc.request<Hex>('eth_getCode', [CREATE2_DEPLOYER_ADDRESS, 'latest'])).length <= 2) {
    throw new Error(`fork: the chain has neither the CoW contracts nor the deterministic-deployment proxy ${CREATE2_DEPLOYER_ADDRESS} to deploy them with`);
  }
  await rpc.request('anvil_setCode', [AUTHENTICATOR_ADDRESS, o.artifacts.authenticator.deployedBytecode]);
  let nonce = Number(BigInt(await rpc.request<Hex>('eth_getTransactionCount', [o.deployer, 'latest'])));
  const txs: DevTx[] = [
    { label: 'authenticator.initializeManager', from: o.deployer, to: AUTHENTICATOR_ADDRESS, gas: 150_000n, nonce: nonce++, data: encodeFunctionData({ abi: allowListAuthenticatorAbi, functionName: 'initializeManager', args: [o.deployer] }) },
    { label: 'authenticator.addSolver', from: o.deployer, to: AUTHENTICATOR_ADDRESS, gas: 150_000n, nonce: nonce++, data: encodeFunctionData({ abi: allowListAuthenticatorAbi, functionName: 'addSolver', args: [o.solver] }) },
    {
      label: 'deploy GPv2Settlement (CREATE2)', from: o.deployer, to: CREATE2_DEPLOYER_ADDRESS, gas: 5_500_000n, nonce: nonce++,
      data: concatHex([SETTLEMENT_SALT, o.artifacts.settlement.bytecode, encodeAbiParameters([{ type: 'address' }, { type: 'address' }], [AUTHENTICATOR_ADDRESS, BALANCER_VAULT_ADDRESS])]),
    },
  ];
  const mined = await sendAndMine(rpc, txs, o.clock);
  await assertAllSucceeded(rpc, txs, mined.hashes);
  if ((await rpc.request<Hex>('eth_getCode', [SETTLEMENT_ADDRESS, 'latest'])).length <= 2) throw new Error(`fork: the settlement did not land at ${SETTLEMENT_ADDRESS}`);
}

async function deployWrappedNative(rpc: DevnetRpc, deployer: Address, clock: BlockClock, artifacts: DevnetArtifacts): Promise<Address> {
  const nonce = Number(BigInt(await rpc.request<Hex>('eth_getTransactionCount', [deployer, 'latest'])));
  const tx: DevTx = { label: 'deploy WETH9', from: deployer, gas: 900_000n, nonce, data: artifacts.weth9.bytecode };
  const mined = await sendAndMine(rpc, [tx], clock);
  await assertAllSucceeded(rpc, [tx], mined.hashes);
  const receipt = await rpc.request<{ contractAddress: Address }>('eth_getTransactionReceipt', [mined.hashes[0]]);
  return getAddress(receipt.contractAddress);
}

/** Symbol, name and decimals read from the chain; null when the address has no code or is no ERC-20. */
async function readToken(rpc: DevnetRpc, address: Address): Promise<DevnetToken | null> {
  if ((await rpc.request<Hex>('eth_getCode', [address, 'latest'])).length <= 2) return null;
  const call = (fn: 'symbol' | 'name' | 'decimals') => rpc.request<Hex>('eth_call', [{ to: address, data: encodeFunctionData({ abi: devnetTokenAbi, functionName: fn }) }, 'latest']).catch(() => '0x' as Hex);
  const [symbol, name, decimals] = await Promise.all([call('symbol'), call('name'), call('decimals')]);
  const s = decodeTokenText(symbol);
  const d = decodeDecimals(decimals);
  if (s === null || d === null) return null;
  return { symbol: s, name: decodeTokenText(name) ?? s, address: getAddress(address), decimals: d };
}

/** `units` of the wrapped native token's worth of `token`, at its pool price against it (fallback: whole units). */
async function nativeWorth(rpc: DevnetRpc, tokens: DevnetToken[], pools: DevnetPool[], wrapped: Address): Promise<(token: DevnetToken, units: bigint) => bigint> {
  const reserves = (await readBatch(rpc, pools.map((p) => ({ to: p.address, abi: uniswapV2PairAbi, functionName: 'getReserves' })))) as [bigint, bigint, number][];
  const nativeDecimals = tokens.find((t) => lower(t.address) === wrapped)?.decimals ?? 18;
  return (token, units) => {
    const amountNative = units * 10n ** BigInt(nativeDecimals);
    if (lower(token.address) === wrapped) return amountNative;
    const i = pools.findIndex((p) => [lower(p.token0), lower(p.token1)].includes(wrapped) && [lower(p.token0), lower(p.token1)].includes(lower(token.address)));
    if (i >= 0) {
      const [r0, r1] = reserves[i]!;
      const wrappedIs0 = lower(pools[i]!.token0) === wrapped;
      const [rNative, rToken] = wrappedIs0 ? [r0, r1] : [r1, r0];
      if (rNative > 0n && rToken > 0n) return (amountNative * rToken) / rNative;
    }
    return UNPRICED_UNITS * 10n ** BigInt(token.decimals);
  };
}

/**
 * Pins into the fork's own state everything the node relies on: the code of every contract it talks to, and each
 * storage word that representative calls read (token metadata and balances, transfers as the vault relayer makes
 * them, pair reserves and swaps, factory look-ups, the settlement and its allow-list). Each is written back with
 * anvil's cheat methods — the same value, now "touched", hence saved — because a reloaded fork state keeps only
 * what was written or mined.
 */
export async function pinForkState(rpc: DevnetRpc, deployment: DevnetDeployment, log: ForkSetupLog): Promise<void> {
  const started = performance.now();
  const { contracts, tokens, pools, accounts } = deployment;
  const trader = accounts.find((a) => a.role === 'trader')!.address;
  const other = accounts.filter((a) => a.role === 'trader')[1]!.address;
  const bot = accounts.find((a) => a.role === 'market-bot')!.address;
  const solver = accounts.find((a) => a.role === 'solver')!.address;
  type Call = { from?: Address; to: Address; data: Hex; value?: Hex };
  const calls: Call[] = [];
  const fn = (to: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[] = [], from?: Address, value?: bigint): void => {
    calls.push({ to, from, data: encodeFunctionData({ abi: abi as never, functionName, args } as never), ...(value ? { value: hexQ(value) } : {}) });
  };
  fn(contracts.settlement, settlementAbi, 'domainSeparator');
  fn(contracts.settlement, settlementAbi, 'vaultRelayer');
  fn(contracts.settlement, settlementAbi, 'authenticator');
  fn(contracts.settlement, settlementReadAbi, 'filledAmount', ['0x']);
  fn(contracts.authenticator, authenticatorAbi, 'isSolver', [solver]);
  fn(contracts.authenticator, authenticatorAbi, 'manager');
  fn(contracts.vaultRelayer, relayerAbi, 'transferFromAccounts', [[]], contracts.settlement);
  for (const t of tokens) {
    for (const f of ['name', 'symbol', 'decimals', 'totalSupply'] as const) fn(t.address, devnetTokenAbi, f);
    for (const holder of [contracts.settlement, ...accounts.map((a) => a.address), ...pools.map((p) => p.address)]) fn(t.address, devnetTokenAbi, 'balanceOf', [holder]);
    fn(t.address, devnetTokenAbi, 'allowance', [trader, contracts.vaultRelayer]);
    // a transfer as the vault relayer makes it, and one back from the settlement
    fn(t.address, devnetTokenAbi, 'transferFrom', [trader, contracts.settlement, 1n], contracts.vaultRelayer);
    fn(t.address, devnetTokenAbi, 'transfer', [other, 1n], trader);
  }
  fn(contracts.weth, weth9Abi, 'deposit', [], trader, 1n);
  fn(contracts.weth, weth9Abi, 'withdraw', [1n], trader);
  if (contracts.ammFactory !== zeroAddress) {
    fn(contracts.ammFactory, uniswapV2FactoryAbi, 'allPairsLength');
    fn(contracts.ammRouter, uniswapV2RouterAbi, 'factory');
    fn(contracts.ammRouter, uniswapV2RouterAbi, 'WETH');
    // getPair(a, b) and getPair(b, a) are two words of the factory's mapping
    for (const a of tokens) for (const b of tokens) if (a !== b) fn(contracts.ammFactory, uniswapV2FactoryAbi, 'getPair', [a.address, b.address]);
    for (const p of pools) {
      for (const f of ['token0', 'token1', 'getReserves'] as const) fn(p.address, uniswapV2PairAbi, f);
      for (const path of [[p.token0, p.token1], [p.token1, p.token0]]) {
        fn(contracts.ammRouter, uniswapV2RouterAbi, 'getAmountsOut', [1000n, path]);
        fn(contracts.ammRouter, uniswapV2RouterAbi, 'swapExactTokensForTokens', [1000n, 0n, path, bot, maxUint256], bot);
      }
    }
  }
  const traces = await rpc.batch<Record<string, { balance?: Hex; nonce?: number; code?: Hex; storage?: Record<Hex, Hex> }>>(
    calls.map((c) => ({ method: 'debug_traceCall', params: [c, 'latest', { tracer: 'prestateTracer' }] })),
  );
  const accountsSeen = new Map<string, { code?: Hex; balance?: Hex; nonce?: number; storage: Map<string, Hex> }>();
  // the code of every contract the node calls, whether or not a traced call above ran it (Multicall3: no storage)
  const contractsUsed = [...new Set([...Object.values(contracts), ...tokens.map((t) => t.address), ...pools.map((p) => p.address)].map(lower))].filter((a) => a !== zeroAddress);
  const codes = await rpc.batch<Hex>(contractsUsed.map((a) => ({ method: 'eth_getCode', params: [a, 'latest'] })));
  contractsUsed.forEach((address, i) => {
    if (codes[i]!.length > 2) accountsSeen.set(address, { code: codes[i]!, storage: new Map() });
  });
  for (const trace of traces) {
    for (const [address, state] of Object.entries(trace)) {
      const seen = accountsSeen.get(address) ?? { storage: new Map<string, Hex>() };
      if (state.code && state.code.length > 2) seen.code = state.code;
      if (state.balance) seen.balance = state.balance;
      if (state.nonce !== undefined) seen.nonce = state.nonce;
      for (const [slot, value] of Object.entries(state.storage ?? {})) seen.storage.set(slot, value);
      accountsSeen.set(address, seen);
    }
  }
  const writes: Array<{ method: string; params: unknown[] }> = [];
  let words = 0;
  for (const [address, seen] of accountsSeen) {
    if (seen.code) writes.push({ method: 'anvil_setCode', params: [address, seen.code] });
    // the prestate is before the traced call: read the present balance, nonce and words instead
    writes.push({ method: 'anvil_setBalance', params: [address, await rpc.request<Hex>('eth_getBalance', [address, 'latest'])] });
    writes.push({ method: 'anvil_setNonce', params: [address, await rpc.request<Hex>('eth_getTransactionCount', [address, 'latest'])] });
    const slots = [...seen.storage.keys()];
    const values = await rpc.batch<Hex>(slots.map((slot) => ({ method: 'eth_getStorageAt', params: [address, slot, 'latest'] })));
    slots.forEach((slot, i) => writes.push({ method: 'anvil_setStorageAt', params: [address, slot, values[i]] }));
    words += slots.length;
  }
  for (let i = 0; i < writes.length; i += 200) await rpc.batch(writes.slice(i, i + 200));
  log.info(`fork: pinned ${accountsSeen.size} accounts and ${words} storage words into the fork's own state in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
