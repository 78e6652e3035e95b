// Balance words found, not guessed, on the mainnet-like test chain: WETH9 (Solidity mapping), a USDC-like token
// behind an EIP-1967 proxy with balances at slot 8 and a pause word read first, and a DAI-like token with balances in
// Vyper key order. A contract without balanceOf is refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAbiParameters, keccak256, parseEther, type Address } from 'viem';
import { MAINNET, startMainnetUpstream, type MainnetUpstream } from '../../../test/fixtures/mainnet-upstream.js';
import { devnetTokenAbi } from './abis.js';
import { readBatch } from './transactions.js';
import { findBalanceWord, setTokenBalance, TokenBalanceSlotError } from './token-balance-slot.js';

const holder: Address = '0x000000000000000000000000000000000000bEEF';
const solidityKey = (who: Address, slot: bigint) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [who, slot]));
const vyperKey = (slot: bigint, who: Address) => keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }], [slot, who]));

describe('token balance words', () => {
  let chain: MainnetUpstream;
  const balance = async (token: Address, who: Address) =>
    ((await readBatch(chain.rpc, [{ to: token, abi: devnetTokenAbi, functionName: 'balanceOf', args: [who] }])) as [bigint])[0];

  before(async () => {
    chain = await startMainnetUpstream({ blockTime: 0 });
  });
  after(async () => {
    await chain?.stop();
  });

  it('finds the word balanceOf reads: Solidity order, a proxy\'s own storage past a pause word, Vyper order', async () => {
    assert.deepEqual(await findBalanceWord(chain.rpc, MAINNET.weth, holder), { address: MAINNET.weth.toLowerCase(), slot: solidityKey(holder, 3n) });
    assert.deepEqual(await findBalanceWord(chain.rpc, MAINNET.usdc, holder), { address: MAINNET.usdc.toLowerCase(), slot: solidityKey(holder, 8n) });
    assert.deepEqual(await findBalanceWord(chain.rpc, MAINNET.dai, holder), { address: MAINNET.dai.toLowerCase(), slot: vyperKey(3n, holder) });
  });

  it('sets exactly the amount, leaves the words it tried as they were and other holders untouched', async () => {
    const others = await Promise.all([MAINNET.weth, MAINNET.usdc, MAINNET.dai].map((t) => balance(t, chain.historyTrader)));
    for (const [token, amount] of [[MAINNET.weth, parseEther('12.5')], [MAINNET.usdc, 987_654_321n], [MAINNET.dai, parseEther('4242')]] as const) {
      await setTokenBalance(chain.rpc, token, holder, amount);
      assert.equal(await balance(token, holder), amount);
    }
    assert.deepEqual(await Promise.all([MAINNET.weth, MAINNET.usdc, MAINNET.dai].map((t) => balance(t, chain.historyTrader))), others);
  });

  it('refuses a contract whose balanceOf reads no word', async () => {
    await assert.rejects(setTokenBalance(chain.rpc, chain.manager, holder, 1n), (err: unknown) => err instanceof TokenBalanceSlotError && /no storage word holds the balance|cannot be traced/.test(err.message));
  });
});
