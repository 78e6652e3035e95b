/**
 * The liquidity floor on the real devnet (issue 19 M3): a self-priced token with a thin pool of its own is worth
 * nothing to the affiliate program, even when an auction priced it; a deep token is valued at its auction price.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createPublicClient, createWalletClient, http, maxUint256, parseEther, type Address, type Hash } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { createChainClient } from '../../chain/client.js';
import { loadDevnetArtifacts } from '../../chain/devnet/artifacts.js';
import { devnetTokenAbi, uniswapV2RouterAbi, weth9Abi } from '../../chain/devnet/abis.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { TradeValuation } from './trade-valuation.js';

describe('TradeValuation liquidity floor on the devnet', () => {
  let chain: TestDevnet;
  let database: Database;
  let thin: Address;
  let dai: Address;

  before(async () => {
    chain = await startTestDevnet();
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    const { contracts, tokens, accounts } = chain.devnet.deployment;
    dai = tokens.find((t) => t.symbol === 'DAI')!.address;
    const account = privateKeyToAccount(accounts[0].privateKey);
    const wallet = createWalletClient({ account, transport: http(chain.rpcUrl) });
    const plain = createPublicClient({ transport: http(chain.rpcUrl) });
    const mined = async (hash: Promise<Hash>) => assert.equal((await plain.waitForTransactionReceipt({ hash: await hash, pollingInterval: 100 })).status, 'success');
    // a token of our own and a pool against WETH holding 20 WETH: above the order book's floor of 10 native tokens (so
    // an auction prices it; on a chain with a cheap native token that floor is a few dollars), below $100k at $3000/ETH
    const artifact = loadDevnetArtifacts().devnetToken;
    const deploy = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: ['Self Priced', 'SELF', 18], chain: null });
    thin = (await plain.waitForTransactionReceipt({ hash: deploy, pollingInterval: 100 })).contractAddress!;
    await mined(wallet.writeContract({ address: thin, abi: devnetTokenAbi, functionName: 'mint', args: [account.address, parseEther('1000')], chain: null }));
    await mined(wallet.writeContract({ address: contracts.weth, abi: weth9Abi, functionName: 'deposit', value: parseEther('20'), chain: null }));
    await mined(wallet.writeContract({ address: thin, abi: devnetTokenAbi, functionName: 'approve', args: [contracts.ammRouter, maxUint256], chain: null }));
    await mined(wallet.writeContract({ address: contracts.weth, abi: weth9Abi, functionName: 'approve', args: [contracts.ammRouter, maxUint256], chain: null }));
    await mined(wallet.writeContract({
      address: contracts.ammRouter, abi: uniswapV2RouterAbi, functionName: 'addLiquidity',
      args: [thin, contracts.weth, parseEther('20'), parseEther('20'), 0n, 0n, account.address, BigInt(Math.floor(Date.now() / 1000) + 3600)], chain: null,
    }));
    // an auction priced both: 1 ETH per SELF (what its own pool says), 0.0004 ETH per DAI
    await sql`insert into solver_competitions (chain_id, auction_id, start_block, deadline_block, auction, solutions)
      values (31337, 1, 1, 4, ${JSON.stringify({ orders: [], prices: { [thin.toLowerCase()]: String(10n ** 18n), [dai.toLowerCase()]: String(4n * 10n ** 14n) } })}::jsonb, '[]'::jsonb)`.execute(database.db);
  });
  after(async () => {
    await database?.close();
    await chain?.stop();
  });

  const valuation = (minLiquidityUsd: number) => {
    const { contracts } = chain.devnet.deployment;
    const client = createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 });
    const network = { chainId: 31337, client, reader: null as never, amm: { name: 'uniswap-v2', factory: contracts.ammFactory, router: contracts.ammRouter } as never, wrappedNative: contracts.weth, connectors: [contracts.weth] };
    return new TradeValuation({ db: database.db, network, usdPrices: { usdPriceOrNull: async () => 3_000 }, minLiquidityUsd });
  };
  const trade = { blockNumber: 10, txHash: null };

  it('a token whose deepest pool holds 20 WETH ($60k) is worth nothing under a $100k floor, however an auction priced it', async () => {
    assert.equal(await valuation(100_000).usdValue(thin, parseEther('5'), trade), null);
  });

  it('a deep token is valued at its auction price; a chain with a lower floor counts the thin token too', async () => {
    assert.equal(await valuation(100_000).usdValue(dai, parseEther('1000'), trade), 1000 * 0.0004 * 3_000);
    assert.equal(await valuation(10_000).usdValue(thin, parseEther('5'), trade), 5 * 3_000);
  });
});
