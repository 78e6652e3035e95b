// Deploys everything the devnet offers onto a fresh anvil chain (mining off), deterministically: the same
// transactions in the same order from the same accounts give the same addresses on every fresh start.
import {
  concatHex,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  maxUint256,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import {
  allowListAuthenticatorAbi,
  devnetTokenAbi,
  settlementAbi,
  uniswapV2FactoryAbi,
  uniswapV2PairAbi,
  uniswapV2RouterAbi,
  weth9Abi,
} from './abis.js';
import { deriveDevnetAccounts } from './accounts.js';
import { loadDevnetArtifacts, type DevnetArtifacts } from './artifacts.js';
import {
  AUTHENTICATOR_ADDRESS,
  BALANCER_VAULT_ADDRESS,
  CREATE2_DEPLOYER_ADDRESS,
  DEVNET_DOMAIN_SEPARATOR,
  HOOKS_TRAMPOLINE_ADDRESS,
  MULTICALL3_ADDRESS,
  SETTLEMENT_ADDRESS,
  SETTLEMENT_SALT,
  VAULT_RELAYER_ADDRESS,
  type DevnetDeployment,
  type DevnetPool,
  type DevnetRole,
  type DevnetToken,
} from './deployment.js';
import { DEVNET_ASSETS, type PoolState } from './market-model.js';
import { domainSeparator } from '../../protocol/order-domain.js';
import type { DevnetRpc } from './rpc.js';
import {
  assertAllSucceeded,
  readBatch,
  sendAndMine,
  type BlockClock,
  type DevTx,
} from './transactions.js';

export interface TokenSpec {
  symbol: string;
  name: string;
  decimals: number;
}

/** The minted tokens (WETH9 comes on top). */
export const DEVNET_TOKEN_SPECS: readonly TokenSpec[] = [
  { symbol: 'USDC', name: 'USD Coin', decimals: 6 },
  { symbol: 'DAI', name: 'Dai Stablecoin', decimals: 18 },
  { symbol: 'WBTC', name: 'Wrapped BTC', decimals: 8 },
  { symbol: 'COW', name: 'CoW Protocol Token', decimals: 18 },
];
export const WETH_SPEC: TokenSpec = { symbol: 'WETH', name: 'Wrapped Ether', decimals: 18 };

/** Pools and their seeded depth: USD value of each side at the anchor prices. */
export const DEVNET_POOL_SPECS: readonly { a: string; b: string; depthUsd: number }[] = [
  { a: 'WETH', b: 'USDC', depthUsd: 10_000_000 },
  { a: 'WETH', b: 'DAI', depthUsd: 5_000_000 },
  { a: 'WETH', b: 'WBTC', depthUsd: 5_000_000 },
  { a: 'WETH', b: 'COW', depthUsd: 2_000_000 },
  { a: 'USDC', b: 'DAI', depthUsd: 5_000_000 },
  { a: 'WBTC', b: 'USDC', depthUsd: 5_000_000 },
];

/** Token holdings given at set-up, in whole units (USD-ish: traders ≈ $1.6M each, the wallet about half). */
const TRADER_HOLDINGS: Record<string, number> = { WETH: 100, USDC: 250_000, DAI: 250_000, WBTC: 5, COW: 500_000 };
const WALLET_HOLDINGS: Record<string, number> = { WETH: 25, USDC: 100_000, DAI: 100_000, WBTC: 2, COW: 200_000 };
/** The market bot trades both directions for as long as the devnet runs: give it far more than any pool holds. */
const BOT_HOLDINGS: Record<string, number> = { WETH: 20_000, USDC: 60_000_000, DAI: 60_000_000, WBTC: 1_000, COW: 120_000_000 };
const WALLET_NATIVE = parseEther('10');
const RICH_NATIVE = parseEther('1000000');

const GAS = {
  call: 150_000n,
  mint: 120_000n,
  approve: 80_000n,
  transfer: 80_000n,
  deposit: 80_000n,
  settlement: 5_500_000n,
  weth: 900_000n,
  token: 1_600_000n,
  factory: 3_600_000n,
  router: 5_500_000n,
  wallet: 1_200_000n,
  addLiquidity: 3_300_000n,
  ethFlow: 2_000_000n,
};

/**
 * Places the hooks trampoline's runtime code at its fixed address. Called on every start (fresh or restored), so a
 * chain saved before the trampoline existed gets it too, and a changed contract replaces the old code.
 */
export async function installHooksTrampoline(rpc: DevnetRpc, artifacts: Pick<DevnetArtifacts, 'hooksTrampoline'> = loadDevnetArtifacts()): Promise<Address> {
  await rpc.request('anvil_setCode', [HOOKS_TRAMPOLINE_ADDRESS, artifacts.hooksTrampoline.deployedBytecode]);
  const code = await rpc.request<Hex>('eth_getCode', [HOOKS_TRAMPOLINE_ADDRESS, 'latest']);
  if (code.toLowerCase() !== artifacts.hooksTrampoline.deployedBytecode.toLowerCase()) throw new Error('devnet: hooks trampoline code was not installed');
  return HOOKS_TRAMPOLINE_ADDRESS;
}

/** Amount of `symbol` worth `usd` at its anchor price, in base units. */
export function usdToUnits(usd: number, symbol: string, decimals: number): bigint {
  const price = DEVNET_ASSETS[symbol]?.anchorUsd;
  if (!price) throw new Error(`no anchor price for ${symbol}`);
  const micro = BigInt(Math.round((usd / price) * 1e6));
  return (micro * 10n ** BigInt(decimals)) / 1_000_000n;
}

const units = (amount: number, decimals: number): bigint =>
  (BigInt(Math.round(amount * 1e6)) * 10n ** BigInt(decimals)) / 1_000_000n;

export interface DeployResult {
  deployment: DevnetDeployment;
  /** Pool states right after seeding (for the history replay). */
  pools: PoolState[];
  blocks: number;
  gasUsed: bigint;
}

/**
 * Deploys onto a fresh chain whose mining is off. Every block is mined explicitly with `clock` timestamps.
 * Fails loudly if the settlement does not land at its canonical address with the canonical domain separator.
 */
export async function deployDevnet(
  rpc: DevnetRpc,
  clock: BlockClock,
  artifacts: DevnetArtifacts = loadDevnetArtifacts(),
): Promise<DeployResult> {
  const accounts = deriveDevnetAccounts();
  const roleAddress = (role: DevnetRole): Address => accounts.find((a) => a.role === role)!.address;
  const deployer = roleAddress('deployer');
  const solver = roleAddress('solver');
  const bot = roleAddress('market-bot');
  const traders = accounts.filter((a) => a.role === 'trader').map((a) => a.address);

  const start = await rpc.batch<Hex>([
    { method: 'eth_getTransactionCount', params: [deployer, 'latest'] },
    { method: 'eth_getCode', params: [SETTLEMENT_ADDRESS, 'latest'] },
    { method: 'eth_chainId', params: [] },
  ]);
  // the devnet is chain 31337; tests deploy the same contracts onto an anvil standing in for a real chain's node
  const chainId = Number(start[2]!);
  const expectedDomainSeparator = chainId === 31337 ? DEVNET_DOMAIN_SEPARATOR : domainSeparator(chainId, SETTLEMENT_ADDRESS);
  if (BigInt(start[0]!) !== 0n || start[1] !== '0x') {
    throw new Error('devnet: deployDevnet needs a fresh chain (the deployer has sent transactions already)');
  }

  // Code placed directly, and native balances for the accounts that pay for set-up and trading.
  await rpc.batch([
    { method: 'anvil_setCode', params: [AUTHENTICATOR_ADDRESS, artifacts.authenticator.deployedBytecode] },
    { method: 'anvil_setCode', params: [MULTICALL3_ADDRESS, artifacts.multicall3.deployedBytecode] },
    { method: 'anvil_setBalance', params: [deployer, `0x${RICH_NATIVE.toString(16)}`] },
    { method: 'anvil_setBalance', params: [bot, `0x${RICH_NATIVE.toString(16)}`] },
  ]);

  // ---- phase 1: everything the deployer sends -------------------------------------------------------------
  const txs: DevTx[] = [];
  let nonce = 0;
  const fromDeployer = (label: string, gas: bigint, fields: Omit<DevTx, 'label' | 'from' | 'gas' | 'nonce'>): Address => {
    const n = nonce++;
    txs.push({ label, from: deployer, gas, nonce: n, ...fields });
    return getContractAddress({ from: deployer, nonce: BigInt(n) });
  };

  fromDeployer('authenticator.initializeManager', GAS.call, {
    to: AUTHENTICATOR_ADDRESS,
    data: encodeFunctionData({ abi: allowListAuthenticatorAbi, functionName: 'initializeManager', args: [deployer] }),
  });
  fromDeployer('authenticator.addSolver', GAS.call, {
    to: AUTHENTICATOR_ADDRESS,
    data: encodeFunctionData({ abi: allowListAuthenticatorAbi, functionName: 'addSolver', args: [solver] }),
  });
  const settlementInit = concatHex([
    artifacts.settlement.bytecode,
    encodeAbiParameters([{ type: 'address' }, { type: 'address' }], [AUTHENTICATOR_ADDRESS, BALANCER_VAULT_ADDRESS]),
  ]);
  fromDeployer('deploy GPv2Settlement (CREATE2)', GAS.settlement, {
    to: CREATE2_DEPLOYER_ADDRESS,
    data: concatHex([SETTLEMENT_SALT, settlementInit]),
  });
  const weth = fromDeployer('deploy WETH9', GAS.weth, { data: artifacts.weth9.bytecode });
  const tokens: DevnetToken[] = [{ ...WETH_SPEC, address: weth }];
  for (const spec of DEVNET_TOKEN_SPECS) {
    const address = fromDeployer(`deploy ${spec.symbol}`, GAS.token, {
      data: encodeDeployData({
        abi: artifacts.devnetToken.abi,
        bytecode: artifacts.devnetToken.bytecode,
        args: [spec.name, spec.symbol, spec.decimals],
      }),
    });
    tokens.push({ ...spec, address });
  }
  const bySymbol = new Map(tokens.map((t) => [t.symbol, t]));
  const token = (symbol: string): DevnetToken => bySymbol.get(symbol)!;

  const factory = fromDeployer('deploy UniswapV2Factory', GAS.factory, {
    data: encodeDeployData({ abi: artifacts.uniswapV2Factory.abi, bytecode: artifacts.uniswapV2Factory.bytecode, args: [deployer] }),
  });
  const router = fromDeployer('deploy UniswapV2Router02', GAS.router, {
    data: encodeDeployData({
      abi: artifacts.uniswapV2Router02.abi,
      bytecode: artifacts.uniswapV2Router02.bytecode,
      args: [factory, weth],
    }),
  });
  const smartWallet = fromDeployer('deploy DemoSmartWallet', GAS.wallet, {
    data: encodeDeployData({
      abi: artifacts.demoSmartWallet.abi,
      bytecode: artifacts.demoSmartWallet.bytecode,
      args: [traders[0]!, VAULT_RELAYER_ADDRESS, tokens.map((t) => t.address)],
    }),
    value: WALLET_NATIVE,
  });

  // Amounts: pool liquidity per token, plus holdings.
  const poolAmounts = DEVNET_POOL_SPECS.map((p) => ({
    ...p,
    amountA: usdToUnits(p.depthUsd, p.a, token(p.a).decimals),
    amountB: usdToUnits(p.depthUsd, p.b, token(p.b).decimals),
  }));
  const liquidityOf = (symbol: string): bigint =>
    poolAmounts.reduce((sum, p) => sum + (p.a === symbol ? p.amountA : 0n) + (p.b === symbol ? p.amountB : 0n), 0n);

  const wethForOthers = units(TRADER_HOLDINGS.WETH!, 18) * BigInt(traders.length) + units(WALLET_HOLDINGS.WETH!, 18);
  fromDeployer('WETH.deposit', GAS.deposit, {
    to: weth,
    data: encodeFunctionData({ abi: weth9Abi, functionName: 'deposit' }),
    value: liquidityOf('WETH') + wethForOthers,
  });
  for (const t of tokens) {
    if (t.symbol === 'WETH') continue;
    const recipients: [Address, bigint][] = [
      [deployer, liquidityOf(t.symbol)],
      ...traders.map((a): [Address, bigint] => [a, units(TRADER_HOLDINGS[t.symbol]!, t.decimals)]),
      [smartWallet, units(WALLET_HOLDINGS[t.symbol]!, t.decimals)],
      [bot, units(BOT_HOLDINGS[t.symbol]!, t.decimals)],
    ];
    for (const [to, amount] of recipients) {
      fromDeployer(`${t.symbol}.mint`, GAS.mint, {
        to: t.address,
        data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'mint', args: [to, amount] }),
      });
    }
  }
  for (const t of tokens) {
    fromDeployer(`${t.symbol}.approve(router) by deployer`, GAS.approve, {
      to: t.address,
      data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'approve', args: [router, maxUint256] }),
    });
  }
  for (const p of poolAmounts) {
    fromDeployer(`addLiquidity ${p.a}/${p.b}`, GAS.addLiquidity, {
      to: router,
      data: encodeFunctionData({
        abi: uniswapV2RouterAbi,
        functionName: 'addLiquidity',
        args: [token(p.a).address, token(p.b).address, p.amountA, p.amountB, p.amountA, p.amountB, deployer, maxUint256],
      }),
    });
  }
  const wethTransfers: [Address, bigint][] = [
    ...traders.map((a): [Address, bigint] => [a, units(TRADER_HOLDINGS.WETH!, 18)]),
    [smartWallet, units(WALLET_HOLDINGS.WETH!, 18)],
  ];
  for (const [to, amount] of wethTransfers) {
    fromDeployer('WETH.transfer', GAS.transfer, {
      to: weth,
      data: encodeFunctionData({ abi: weth9Abi, functionName: 'transfer', args: [to, amount] }),
    });
  }

  // last of the deployer's transactions, so that the addresses before it stay what they were
  const ethFlow = fromDeployer('deploy EthFlow', GAS.ethFlow, {
    data: encodeDeployData({ abi: artifacts.ethFlow.abi, bytecode: artifacts.ethFlow.bytecode, args: [SETTLEMENT_ADDRESS, weth] }),
  });

  const phase1 = await sendAndMine(rpc, txs, clock);
  let blocks = phase1.blocks;
  let gasUsed = await assertAllSucceeded(rpc, txs, phase1.hashes);

  // ---- phase 2: approvals by the traders (to the vault relayer) and the bot (to the router) ----------------
  // Separate blocks: across senders the order within a block is not guaranteed, and an approve on an address
  // without code yet would "succeed" doing nothing.
  const txs2: DevTx[] = [];
  traders.forEach((trader) => {
    tokens.forEach((t, i) => {
      txs2.push({
        label: `${t.symbol}.approve(vault relayer) by trader ${trader}`,
        from: trader,
        to: t.address,
        gas: GAS.approve,
        nonce: i,
        data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'approve', args: [VAULT_RELAYER_ADDRESS, maxUint256] }),
      });
    });
  });
  txs2.push({
    label: 'WETH.deposit by market bot',
    from: bot,
    to: weth,
    gas: GAS.deposit,
    nonce: 0,
    value: units(BOT_HOLDINGS.WETH!, 18),
    data: encodeFunctionData({ abi: weth9Abi, functionName: 'deposit' }),
  });
  tokens.forEach((t, i) => {
    txs2.push({
      label: `${t.symbol}.approve(router) by market bot`,
      from: bot,
      to: t.address,
      gas: GAS.approve,
      nonce: i + 1,
      data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'approve', args: [router, maxUint256] }),
    });
  });
  const phase2 = await sendAndMine(rpc, txs2, clock);
  blocks += phase2.blocks;
  gasUsed += await assertAllSucceeded(rpc, txs2, phase2.hashes);

  // ---- verification (fails loudly) and pool discovery ------------------------------------------------------
  const checks = await readBatch(rpc, [
    { to: SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'domainSeparator' },
    { to: SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'vaultRelayer' },
    { to: AUTHENTICATOR_ADDRESS, abi: allowListAuthenticatorAbi, functionName: 'isSolver', args: [solver] },
    ...poolAmounts.map((p) => ({
      to: factory,
      abi: uniswapV2FactoryAbi,
      functionName: 'getPair',
      args: [token(p.a).address, token(p.b).address],
    })),
  ]);
  const [separator, relayer, isSolver, ...pairs] = checks as [Hex, Address, boolean, ...Address[]];
  if (separator !== expectedDomainSeparator) {
    throw new Error(
      `devnet: settlement domain separator is ${separator}, expected ${expectedDomainSeparator} — wrong settlement bytecode or chain id`,
    );
  }
  if (getAddress(relayer) !== VAULT_RELAYER_ADDRESS) {
    throw new Error(`devnet: vault relayer is ${relayer}, expected ${VAULT_RELAYER_ADDRESS}`);
  }
  if (!isSolver) throw new Error(`devnet: solver ${solver} is not allow-listed`);
  const code = await rpc.request<Hex>('eth_getCode', [MULTICALL3_ADDRESS, 'latest']);
  if (code.length <= 2) throw new Error('devnet: Multicall3 code missing');

  const pools: DevnetPool[] = [];
  const poolStates: PoolState[] = [];
  const reserves = (await readBatch(
    rpc,
    pairs.map((pair) => ({ to: pair, abi: uniswapV2PairAbi, functionName: 'getReserves' })),
  )) as [bigint, bigint, number][];
  poolAmounts.forEach((p, i) => {
    const pair = getAddress(pairs[i]!);
    if (pair === '0x0000000000000000000000000000000000000000') throw new Error(`devnet: pool ${p.a}/${p.b} missing`);
    const [t0, t1] = token(p.a).address.toLowerCase() < token(p.b).address.toLowerCase() ? [token(p.a), token(p.b)] : [token(p.b), token(p.a)];
    pools.push({ address: pair, token0: t0.address, token1: t1.address });
    poolStates.push({
      address: pair,
      token0: { address: t0.address, symbol: t0.symbol, decimals: t0.decimals },
      token1: { address: t1.address, symbol: t1.symbol, decimals: t1.decimals },
      reserve0: reserves[i]![0],
      reserve1: reserves[i]![1],
    });
  });

  const deployment: DevnetDeployment = {
    contracts: {
      settlement: SETTLEMENT_ADDRESS,
      vaultRelayer: VAULT_RELAYER_ADDRESS,
      authenticator: AUTHENTICATOR_ADDRESS,
      weth,
      ammFactory: factory,
      ammRouter: router,
      multicall3: MULTICALL3_ADDRESS,
      smartWallet,
      hooksTrampoline: HOOKS_TRAMPOLINE_ADDRESS,
      ethFlow,
    },
    tokens,
    pools,
    accounts,
  };
  return { deployment, pools: poolStates, blocks, gasUsed };
}
