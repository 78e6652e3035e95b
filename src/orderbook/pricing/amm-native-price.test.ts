import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { loadDevnetArtifacts } from '../../chain/devnet/artifacts.js';
import { devnetTokenAbi, uniswapV2RouterAbi, weth9Abi } from '../../chain/devnet/abis.js';
import { AmmNativePrice } from './amm-native-price.js';

describe('native prices from pools (issue 14, point 14)', () => {
  let chain: TestDevnet;
  let thinToken: Address;
  const prices = (minNativeLiquidity?: bigint) => {
    const { contracts, tokens } = chain.devnet.deployment;
    const usd = tokens.filter((t) => /USD/.test(t.symbol)).map((t) => t.address);
    return new AmmNativePrice({ client: createPublicClient({ transport: http(chain.rpcUrl) }) as never, factory: contracts.ammFactory, wrappedNative: contracts.weth, connectors: [contracts.weth, ...usd], minNativeLiquidity });
  };

  before(async () => {
    chain = await startTestDevnet();
    const { contracts, accounts } = chain.devnet.deployment;
    const account = privateKeyToAccount(accounts[0]!.privateKey);
    const wallet = createWalletClient({ account, transport: http(chain.rpcUrl) });
    const client = createPublicClient({ transport: http(chain.rpcUrl) });
    const wait = async (hash: `0x${string}`) => client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    const artifact = loadDevnetArtifacts().devnetToken;
    const deployed = await wait(await wallet.deployContract({ chain: null, abi: artifact.abi, bytecode: artifact.bytecode, args: ['Thin', 'THIN', 18] }));
    thinToken = deployed.contractAddress!;
    await wait(await wallet.writeContract({ chain: null, address: thinToken, abi: devnetTokenAbi, functionName: 'mint', args: [account.address, 10n ** 24n] }));
    await wait(await wallet.writeContract({ chain: null, address: contracts.weth, abi: weth9Abi, functionName: 'deposit', value: 10n ** 18n }));
    await wait(await wallet.writeContract({ chain: null, address: thinToken, abi: devnetTokenAbi, functionName: 'approve', args: [contracts.ammRouter, 2n ** 255n] }));
    await wait(await wallet.writeContract({ chain: null, address: contracts.weth, abi: weth9Abi, functionName: 'approve', args: [contracts.ammRouter, 2n ** 255n] }));
    // one ether against 1000 THIN: a pool anyone can create for a few dollars
    await wait(await wallet.writeContract({ chain: null,
      address: contracts.ammRouter, abi: uniswapV2RouterAbi, functionName: 'addLiquidity',
      args: [thinToken, contracts.weth, 1000n * 10n ** 18n, 10n ** 18n, 0n, 0n, account.address, BigInt(Math.floor(Date.now() / 1000) + 3600)],
    }));
  });
  after(async () => {
    await chain?.stop();
  });

  it('a token whose only pool is thinner than the liquidity floor has no price', async () => {
    assert.equal(await prices().nativePrice(thinToken), null);
    const lenient = await prices(10n ** 17n).nativePrice(thinToken);
    assert.ok(lenient !== null && Math.abs(lenient - 0.001) < 1e-6, String(lenient));
  });

  it('deep tokens are priced by their deepest route', async () => {
    const usdc = chain.devnet.deployment.tokens.find((t) => t.symbol === 'USDC')!.address;
    const price = await prices().nativePrice(usdc);
    assert.ok(price !== null && price > 1e8 && price < 1e9, String(price));
  });
});
