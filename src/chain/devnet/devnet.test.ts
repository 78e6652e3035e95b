// Against a real anvil: one fresh, ephemeral devnet (1 h of history, 1 s blocks, a busy bot) shared by the tests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createPublicClient,
  decodeEventLog,
  encodeFunctionData,
  getAbiItem,
  getAddress,
  http,
  maxUint256,
  parseSignature,
  parseUnits,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  allowListAuthenticatorAbi,
  demoSmartWalletAbi,
  devnetTokenAbi,
  settlementAbi,
  uniswapV2FactoryAbi,
  uniswapV2PairAbi,
  uniswapV2RouterAbi,
} from './abis.js';
import { DEVNET_POOL_SPECS } from './deploy.js';
import {
  AUTHENTICATOR_ADDRESS,
  DEVNET_DOMAIN_SEPARATOR,
  FaucetError,
  findFreePort,
  MULTICALL3_ADDRESS,
  SETTLEMENT_ADDRESS,
  startDevnet,
  VAULT_RELAYER_ADDRESS,
  type Devnet,
  type DevnetAccount,
  type FaucetErrorCode,
} from './index.js';
import { DEVNET_ASSETS } from './market-model.js';

const swapEvent = getAbiItem({ abi: uniswapV2PairAbi, name: 'Swap' });

let devnet: Devnet;
let client: PublicClient;
const logs: string[] = [];
let startedAt = 0;

const account = (role: DevnetAccount['role'], n = 0): DevnetAccount => devnet.deployment.accounts.filter((a) => a.role === role)[n]!;
const token = (symbol: string) => devnet.deployment.tokens.find((t) => t.symbol === symbol)!;

before(async () => {
  startedAt = Math.floor(Date.now() / 1000);
  const logger = { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m) };
  devnet = await startDevnet({
    dataDir: null,
    port: await findFreePort(),
    blockTime: 1,
    activity: true,
    activitySwapsPerMinute: 120,
    historyHours: 1,
    logger,
  });
  // cacheTime 0: viem otherwise caches getBlockNumber for 4 s.
  client = createPublicClient({ transport: http(devnet.rpcUrl), cacheTime: 0 });
});

after(async () => {
  await devnet?.stop();
});

describe('fresh devnet', () => {
  it('reports a fresh chain 31337 with a genesis hash and progress logs', async () => {
    assert.equal(devnet.fresh, true);
    assert.equal(devnet.chainId, 31337);
    assert.equal(await client.getChainId(), 31337);
    const block0 = await client.getBlock({ blockNumber: 0n });
    assert.equal(devnet.genesisHash, block0.hash);
    assert.ok(logs.some((l) => l.startsWith('devnet: deployed contracts in')), logs.join('\n'));
    assert.ok(logs.some((l) => /devnet: replayed 1 h of market history \(12 blocks/.test(l)), logs.join('\n'));
  });

  it('has the canonical settlement, vault relayer and domain separator', async () => {
    const c = devnet.deployment.contracts;
    assert.equal(c.settlement, SETTLEMENT_ADDRESS);
    assert.equal(c.settlement, '0x9008D19f58AAbD9eD0D60971565AA8510560ab41');
    assert.equal(c.vaultRelayer, '0xC92E8bdf79f0507f65a392b0ab4667716BFE0110');
    const [separator, relayer, auth] = await Promise.all([
      client.readContract({ address: c.settlement, abi: settlementAbi, functionName: 'domainSeparator' }),
      client.readContract({ address: c.settlement, abi: settlementAbi, functionName: 'vaultRelayer' }),
      client.readContract({ address: c.settlement, abi: settlementAbi, functionName: 'authenticator' }),
    ]);
    assert.equal(separator, DEVNET_DOMAIN_SEPARATOR);
    assert.equal(separator, '0x28dc932d67cd79da82085f7fbb19d7c88f84894397b07917354176f60f0096d4');
    assert.equal(relayer, VAULT_RELAYER_ADDRESS);
    assert.equal(auth, AUTHENTICATOR_ADDRESS);
    assert.ok(((await client.getCode({ address: c.vaultRelayer })) ?? '0x').length > 2);
  });

  it('allow-lists the solver, and only the solver', async () => {
    const isSolver = (who: Address) =>
      client.readContract({ address: AUTHENTICATOR_ADDRESS, abi: allowListAuthenticatorAbi, functionName: 'isSolver', args: [who] });
    assert.equal(await isSolver(account('solver').address), true);
    assert.equal(await isSolver(account('trader').address), false);
    const manager = await client.readContract({ address: AUTHENTICATOR_ADDRESS, abi: allowListAuthenticatorAbi, functionName: 'manager' });
    assert.equal(manager, account('deployer').address);
  });

  it('describe() lists what is on chain: tokens with matching symbol/decimals/name, roles, pools', async () => {
    const d = devnet.describe();
    assert.deepEqual(Object.keys(d).sort(), ['accounts', 'blockTime', 'chainId', 'contracts', 'pools', 'rpcUrl', 'tokens']);
    assert.equal(d.chainId, 31337);
    assert.equal(d.blockTime, 1);
    assert.equal(d.rpcUrl, devnet.rpcUrl);
    assert.deepEqual(d.tokens.map((t) => t.symbol), ['WETH', 'USDC', 'DAI', 'WBTC', 'COW']);
    assert.equal(d.tokens[0]!.address, d.contracts.weth);
    for (const t of d.tokens) {
      const [symbol, decimals, name] = await Promise.all([
        client.readContract({ address: t.address, abi: devnetTokenAbi, functionName: 'symbol' }),
        client.readContract({ address: t.address, abi: devnetTokenAbi, functionName: 'decimals' }),
        client.readContract({ address: t.address, abi: devnetTokenAbi, functionName: 'name' }),
      ]);
      assert.equal(symbol, t.symbol);
      assert.equal(decimals, t.decimals);
      assert.equal(name, t.name);
    }
    assert.deepEqual(
      Object.fromEntries(d.tokens.map((t) => [t.symbol, t.decimals])),
      { WETH: 18, USDC: 6, DAI: 18, WBTC: 8, COW: 18 },
    );
    assert.equal(token('USDC').name, 'USD Coin');
    assert.deepEqual(d.accounts.map((a) => a.role), ['trader', 'trader', 'solver', 'market-bot', 'deployer']);
    assert.equal(d.accounts[0]!.address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    assert.equal(d.accounts[1]!.address, '0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    for (const a of d.accounts) assert.equal(privateKeyToAccount(a.privateKey).address, a.address);
    assert.equal(d.pools.length, 6);
    for (const p of d.pools) {
      assert.ok(p.token0.toLowerCase() < p.token1.toLowerCase());
      const pair = await client.readContract({ address: d.contracts.ammFactory, abi: uniswapV2FactoryAbi, functionName: 'getPair', args: [p.token0, p.token1] });
      assert.equal(pair, p.address);
    }
    // A copy: callers cannot change the devnet's record.
    d.tokens[0]!.symbol = 'XXX';
    assert.equal(devnet.describe().tokens[0]!.symbol, 'WETH');
  });

  it('Multicall3 answers aggregate3 at its canonical address (viem multicall)', async () => {
    const usdc = token('USDC');
    const results = await client.multicall({
      multicallAddress: MULTICALL3_ADDRESS,
      contracts: [
        { address: usdc.address, abi: devnetTokenAbi, functionName: 'decimals' },
        { address: usdc.address, abi: devnetTokenAbi, functionName: 'symbol' },
        { address: SETTLEMENT_ADDRESS, abi: devnetTokenAbi, functionName: 'decimals' },
      ],
    });
    assert.deepEqual(results[0], { status: 'success', result: 6 });
    assert.deepEqual(results[1], { status: 'success', result: 'USDC' });
    assert.equal(results[2]!.status, 'failure');
  });

  it('traders hold ETH and every token, and approved the vault relayer for max', async () => {
    for (const trader of devnet.deployment.accounts.filter((a) => a.role === 'trader')) {
      assert.ok((await client.getBalance({ address: trader.address })) > parseUnits('1000', 18));
      for (const t of devnet.deployment.tokens) {
        const [balance, allowance] = await Promise.all([
          client.readContract({ address: t.address, abi: devnetTokenAbi, functionName: 'balanceOf', args: [trader.address] }),
          client.readContract({ address: t.address, abi: devnetTokenAbi, functionName: 'allowance', args: [trader.address, VAULT_RELAYER_ADDRESS] }),
        ]);
        assert.ok(balance > 0n, `${trader.address} has no ${t.symbol}`);
        assert.equal(allowance, maxUint256, `${t.symbol} allowance of ${trader.address}`);
      }
    }
  });

  it('the demo smart wallet: funded, relayer approved, EIP-1271 valid only for its owner, owner-only execute', async () => {
    const wallet = devnet.deployment.contracts.smartWallet;
    const owner = account('trader', 0);
    assert.equal(await client.readContract({ address: wallet, abi: demoSmartWalletAbi, functionName: 'owner' }), owner.address);
    assert.ok((await client.getBalance({ address: wallet })) > 0n);
    for (const t of devnet.deployment.tokens) {
      const [balance, allowance] = await Promise.all([
        client.readContract({ address: t.address, abi: devnetTokenAbi, functionName: 'balanceOf', args: [wallet] }),
        client.readContract({ address: t.address, abi: devnetTokenAbi, functionName: 'allowance', args: [wallet, VAULT_RELAYER_ADDRESS] }),
      ]);
      assert.ok(balance > 0n, `wallet has no ${t.symbol}`);
      assert.equal(allowance, maxUint256);
    }
    const hash = '0x1111111111111111111111111111111111111111111111111111111111111111' as Hex;
    const good = await privateKeyToAccount(owner.privateKey).sign({ hash });
    const bad = await privateKeyToAccount(account('trader', 1).privateKey).sign({ hash });
    const check = (sig: Hex) => client.readContract({ address: wallet, abi: demoSmartWalletAbi, functionName: 'isValidSignature', args: [hash, sig] });
    assert.equal(await check(good), '0x1626ba7e');
    assert.equal(await check(bad), '0xffffffff');
    assert.equal(await check('0x1234'), '0xffffffff');
    // v as 0/1 is accepted too.
    const { r, s, yParity } = parseSignature(good);
    assert.equal(await check(`${r}${s.slice(2)}${yParity === 0 ? '00' : '01'}` as Hex), '0x1626ba7e');
    // execute: the owner may, anyone else may not.
    const data = '0x' as Hex;
    await client.call({ account: owner.address, to: wallet, data: encodeExecute(owner.address, data) });
    await assert.rejects(client.call({ account: account('trader', 1).address, to: wallet, data: encodeExecute(owner.address, data) }), /not the owner/);
  });

  it('tokens: only the deployer mints; permit (EIP-2612) sets an allowance', async () => {
    const usdc = token('USDC');
    const trader = account('trader', 1);
    await assert.rejects(
      client.simulateContract({ account: trader.address, address: usdc.address, abi: devnetTokenAbi, functionName: 'mint', args: [trader.address, 1n] }),
      /not the minter/,
    );
    await client.simulateContract({ account: account('deployer').address, address: usdc.address, abi: devnetTokenAbi, functionName: 'mint', args: [trader.address, 1n] });
    const signer = privateKeyToAccount(trader.privateKey);
    const spender = account('solver').address;
    const deadline = maxUint256;
    const signature = await signer.signTypedData({
      domain: { name: 'USD Coin', version: '1', chainId: 31337, verifyingContract: usdc.address },
      types: { Permit: [
        { name: 'owner', type: 'address' }, { name: 'spender', type: 'address' }, { name: 'value', type: 'uint256' },
        { name: 'nonce', type: 'uint256' }, { name: 'deadline', type: 'uint256' },
      ] },
      primaryType: 'Permit',
      message: { owner: trader.address, spender, value: 123n, nonce: 0n, deadline },
    });
    const { r, s, v } = parseSignature(signature);
    await client.simulateContract({
      account: spender, address: usdc.address, abi: devnetTokenAbi, functionName: 'permit',
      args: [trader.address, spender, 123n, deadline, Number(v), r, s],
    });
    await assert.rejects(
      client.simulateContract({
        account: spender, address: usdc.address, abi: devnetTokenAbi, functionName: 'permit',
        args: [trader.address, spender, 124n, deadline, Number(v), r, s],
      }),
      /invalid permit/,
    );
  });

  it('router quotes on every pool are near the seeded prices', async () => {
    for (const spec of DEVNET_POOL_SPECS) {
      const a = token(spec.a);
      const b = token(spec.b);
      const amountIn = 10n ** BigInt(a.decimals) / 100n; // 0.01 unit: negligible price impact
      const amounts = await client.readContract({
        address: devnet.deployment.contracts.ammRouter, abi: uniswapV2RouterAbi, functionName: 'getAmountsOut', args: [amountIn, [a.address, b.address]],
      });
      const price = (Number(amounts[1]) / 10 ** b.decimals) / (Number(amountIn) / 10 ** a.decimals);
      const seeded = DEVNET_ASSETS[spec.a]!.anchorUsd / DEVNET_ASSETS[spec.b]!.anchorUsd;
      const ratio = price / seeded;
      assert.ok(ratio > 0.95 && ratio < 1.05, `${spec.a}/${spec.b}: ${price} vs seeded ${seeded}`);
    }
  });

  it('has a past: blocks every 5 minutes over the last hour, with swaps that moved the pools', async () => {
    const latest = await client.getBlockNumber();
    const first = await client.getBlock({ blockNumber: 1n });
    const block0 = await client.getBlock({ blockNumber: 0n });
    assert.ok(startedAt - Number(block0.timestamp) >= 3600, 'genesis lies more than an hour back');
    const swapLogs = await client.getLogs({
      address: devnet.deployment.pools.map((p) => p.address),
      event: swapEvent,
      fromBlock: 0n,
      toBlock: latest,
    });
    assert.ok(swapLogs.length >= 12, `swaps ${swapLogs.length}`);
    const historyBlocks = [...new Set(swapLogs.map((l) => l.blockNumber))].slice(0, 12);
    const times = await Promise.all(historyBlocks.map(async (n) => Number((await client.getBlock({ blockNumber: n })).timestamp)));
    for (let i = 1; i < times.length; i++) assert.equal(times[i]! - times[i - 1]!, 300);
    assert.ok(times.at(-1)! - times[0]! >= 3300 - 1);
    assert.ok(Number(first.timestamp) < times[0]!);
    assert.ok(Math.abs(times.at(-1)! - startedAt) < 60, 'history ends at start-up time');
    // Reserves changed from the seeded amounts.
    const usdcWeth = devnet.deployment.pools.find((p) => [p.token0, p.token1].includes(token('USDC').address) && [p.token0, p.token1].includes(token('WETH').address))!;
    const [r0, r1] = await client.readContract({ address: usdcWeth.address, abi: uniswapV2PairAbi, functionName: 'getReserves', blockNumber: historyBlocks[0]! - 1n });
    const [h0, h1] = await client.readContract({ address: usdcWeth.address, abi: uniswapV2PairAbi, functionName: 'getReserves', blockNumber: historyBlocks.at(-1)! });
    assert.ok(r0 !== h0 && r1 !== h1);
    // After the history, blocks carry wall-clock time.
    const head = await client.getBlock();
    const now = Math.ceil(Date.now() / 1000);
    assert.ok(Number(head.timestamp) >= startedAt && Number(head.timestamp) <= now, `head ${head.timestamp}: between the start (${startedAt}) and now (${now})`);
  });

  it('mines on an interval', async () => {
    // nobody sends a transaction: two new blocks can only come from interval mining
    const a = await client.getBlockNumber();
    let b = a;
    for (let i = 0; i < 600 && b < a + 2n; i++) {
      await sleep(100);
      b = await client.getBlockNumber();
    }
    assert.ok(b >= a + 2n, `${a} -> ${b}`);
  });

  it('faucet: native, tokens and WETH arrive in the next block', async () => {
    const recipient = '0x000000000000000000000000000000000000bEEF' as Address;
    const native = await devnet.faucet({ address: recipient.toLowerCase() });
    assert.equal(native.symbol, 'ETH');
    assert.equal(native.amount, parseUnits('10', 18));
    const usdc = await devnet.faucet({ address: recipient, token: 'usdc', amount: '1234.5' });
    const weth = await devnet.faucet({ address: recipient, token: token('WETH').address, amount: '2' });
    const wbtc = await devnet.faucet({ address: recipient, token: 'WBTC', amount: 5n * 10n ** 7n });
    for (const r of [native, usdc, weth, wbtc]) assert.match(r.hash, /^0x[0-9a-f]{64}$/);
    const receipts = await Promise.all([native, usdc, weth, wbtc].map((r) => r.waitForReceipt()));
    assert.ok(receipts.every((r) => r.status === 'success'));
    assert.equal(await client.getBalance({ address: recipient }), parseUnits('10', 18));
    const balanceOf = (address: Address) => client.readContract({ address, abi: devnetTokenAbi, functionName: 'balanceOf', args: [recipient] });
    assert.equal(await balanceOf(token('USDC').address), 1_234_500_000n);
    assert.equal(await balanceOf(token('WETH').address), parseUnits('2', 18));
    assert.equal(await balanceOf(token('WBTC').address), 5n * 10n ** 7n);
  });

  it('faucet: rejects bad input with typed errors', async () => {
    const ok = account('trader', 1).address;
    const cases: [Parameters<Devnet['faucet']>[0], FaucetErrorCode][] = [
      [{ address: 'not-an-address' }, 'InvalidAddress'],
      [{ address: '0x1234' }, 'InvalidAddress'],
      [{ address: '0x0000000000000000000000000000000000000000' }, 'InvalidAddress'],
      [{ address: ok, token: 'SHIB' }, 'UnknownToken'],
      [{ address: ok, token: '0x0000000000000000000000000000000000000001' }, 'UnknownToken'],
      [{ address: ok, token: 'USDC', amount: 'lots' }, 'InvalidAmount'],
      [{ address: ok, token: 'USDC', amount: '-5' }, 'InvalidAmount'],
      [{ address: ok, token: 'USDC', amount: '1.0000001' }, 'InvalidAmount'],
      [{ address: ok, token: 'USDC', amount: '0' }, 'AmountOutOfBounds'],
      [{ address: ok, token: 'USDC', amount: '300000.000001' }, 'AmountOutOfBounds'],
      [{ address: ok, amount: '101' }, 'AmountOutOfBounds'],
      [{ address: ok, token: 'DAI', amount: 10n ** 30n }, 'AmountOutOfBounds'],
      [{ address: ok, token: 'WETH', amount: -1n }, 'AmountOutOfBounds'],
    ];
    for (const [request, code] of cases) {
      await assert.rejects(devnet.faucet(request), (err: unknown) => {
        assert.ok(err instanceof FaucetError, `${JSON.stringify(request, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}: ${String(err)}`);
        assert.equal(err.code, code, JSON.stringify(request, (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
        return true;
      });
    }
    // Limits are inclusive.
    const max = await devnet.faucet({ address: ok, token: 'USDC', amount: '300000' });
    assert.equal((await max.waitForReceipt()).status, 'success');
  });

  it('the market bot swaps on the pools from its own account', async () => {
    const bot = account('market-bot').address;
    const from = await client.getBlockNumber();
    const deadline = Date.now() + 15_000;
    let seen = 0;
    while (Date.now() < deadline && seen === 0) {
      await sleep(500);
      const logs = await client.getLogs({ address: devnet.deployment.pools.map((p) => p.address), event: swapEvent, fromBlock: from });
      for (const log of logs) {
        const tx = await client.getTransaction({ hash: log.transactionHash! });
        if (getAddress(tx.from) === bot) seen++;
        assert.equal(decodeEventLog({ abi: uniswapV2PairAbi, data: log.data, topics: log.topics }).eventName, 'Swap');
      }
    }
    assert.ok(seen > 0, `no bot swap since block ${from}; stats ${JSON.stringify(devnet.marketBotStats())}`);
    assert.equal(devnet.marketBotStats()!.errors, 0, devnet.marketBotStats()!.lastError ?? '');
  });
});

/** execute(target, 0, data); with an EOA target the call succeeds doing nothing. */
function encodeExecute(target: Address, data: Hex): Hex {
  return encodeFunctionData({ abi: demoSmartWalletAbi, functionName: 'execute', args: [target, 0n, data] });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
