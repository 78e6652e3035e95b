// The devnet's eth-flow contract through its ABI, on a real anvil: placement, every custom error, who may invalidate
// when, refunds to the creator, EIP-1271 answers and wrapping into the devnet's WETH9.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  http,
  maxUint256,
  parseEther,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ETHFLOW_ABI, ETHFLOW_VALID_TO, ethFlowOrderUid, orderDomain, type EthFlowOrderData } from '../../protocol/index.js';
import { devnetTokenAbi } from './abis.js';
import { findFreePort, SETTLEMENT_ADDRESS, startDevnet, VAULT_RELAYER_ADDRESS, type Devnet } from './index.js';

let devnet: Devnet;
let client: PublicClient;
let ethFlow: Address;
let weth: Address;
let usdc: Address;

const devnetChain = defineChain({ id: 31337, name: 'devnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [] } } });
const MAGIC = '0x1626ba7e';
const INVALID = '0xffffffff';

const wallet = (n: number) => {
  const account = privateKeyToAccount(devnet.deployment.accounts.filter((a) => a.role === 'trader')[n]!.privateKey);
  return createWalletClient({ account, chain: devnetChain, transport: http(devnet.rpcUrl) });
};
const alice = () => wallet(0);
const bob = () => wallet(1);

let sequence = 0;
async function chainTime(): Promise<number> {
  return Number((await client.getBlock()).timestamp);
}
/** A fresh order (a distinct buy amount each time: identical parameters would be the same order). */
async function newOrder(overrides: Partial<EthFlowOrderData> = {}): Promise<EthFlowOrderData> {
  return {
    buyToken: usdc,
    receiver: alice().account.address,
    sellAmount: parseEther('1'),
    buyAmount: 1_000_000_000n + BigInt(++sequence),
    appData: `0x${'ab'.repeat(32)}`,
    feeAmount: 0n,
    validTo: (await chainTime()) + 3600,
    partiallyFillable: false,
    quoteId: 42n,
    ...overrides,
  };
}

async function send(call: Promise<Hex>): Promise<TransactionReceipt> {
  const receipt = await client.waitForTransactionReceipt({ hash: await call });
  assert.equal(receipt.status, 'success');
  return receipt;
}
const create = (who: ReturnType<typeof wallet>, order: EthFlowOrderData, value = order.sellAmount + order.feeAmount) =>
  send(who.writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'createOrder', args: [order], value }));
const invalidate = (who: ReturnType<typeof wallet>, order: EthFlowOrderData) =>
  send(who.writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'invalidateOrder', args: [order] }));

/** Expects the call to revert with exactly this custom error (and these arguments). */
async function assertReverts(call: Promise<unknown>, errorName: string, args: readonly unknown[] = []): Promise<void> {
  await assert.rejects(call, (err: unknown) => {
    assert.ok(err instanceof BaseError, String(err));
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
    assert.ok(reverted instanceof ContractFunctionRevertedError, `not a revert: ${err.message}`);
    assert.equal(reverted.data?.errorName, errorName);
    assert.deepEqual(reverted.data?.args ?? [], args);
    return true;
  });
}
const simulateCreate = (who: ReturnType<typeof wallet>, order: EthFlowOrderData, value = order.sellAmount + order.feeAmount) =>
  client.simulateContract({ account: who.account, address: ethFlow, abi: ETHFLOW_ABI, functionName: 'createOrder', args: [order], value });
const simulateInvalidate = (who: ReturnType<typeof wallet>, order: EthFlowOrderData) =>
  client.simulateContract({ account: who.account, address: ethFlow, abi: ETHFLOW_ABI, functionName: 'invalidateOrder', args: [order] });

const uidOf = (order: EthFlowOrderData): Hex => ethFlowOrderUid(order, { ethFlow, wrappedNative: weth, domain: orderDomain(31337) });
const digestOf = (order: EthFlowOrderData): Hex => uidOf(order).slice(0, 66) as Hex;
const stored = (order: EthFlowOrderData) => client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [digestOf(order)] });
const signatureCheck = (order: EthFlowOrderData) =>
  client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'isValidSignature', args: [digestOf(order), '0x'] });
const gasCost = (r: TransactionReceipt) => r.gasUsed * r.effectiveGasPrice;
const eventsOf = (r: TransactionReceipt) =>
  r.logs.filter((l) => l.address.toLowerCase() === ethFlow.toLowerCase()).map((l) => decodeEventLog({ abi: ETHFLOW_ABI, data: l.data, topics: l.topics }));

async function passTime(seconds: number): Promise<void> {
  await client.request({ method: 'evm_increaseTime' as never, params: [seconds] as never });
  await client.request({ method: 'evm_mine' as never, params: [] as never });
}

before(async () => {
  devnet = await startDevnet({ dataDir: null, port: await findFreePort(), blockTime: 0, activity: false, historyHours: 0 });
  client = createPublicClient({ transport: http(devnet.rpcUrl), chain: devnetChain });
  ethFlow = devnet.deployment.contracts.ethFlow;
  weth = devnet.deployment.contracts.weth;
  usdc = devnet.deployment.tokens.find((t) => t.symbol === 'USDC')!.address;
});
after(async () => {
  await devnet?.stop();
});

describe('eth-flow contract on the devnet', () => {
  it('is deployed against the canonical settlement and the devnet WETH, relayer allowance unlimited', async () => {
    assert.equal(devnet.describe().contracts.ethFlow, ethFlow);
    assert.equal(await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'cowSwapSettlement' }), SETTLEMENT_ADDRESS);
    assert.equal((await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'wrappedNativeToken' })).toLowerCase(), weth.toLowerCase());
    assert.equal(await client.readContract({ address: weth, abi: devnetTokenAbi, functionName: 'allowance', args: [ethFlow, VAULT_RELAYER_ADDRESS] }), maxUint256);
    assert.deepEqual(await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [`0x${'12'.repeat(32)}`] }), [
      '0x0000000000000000000000000000000000000000',
      0,
    ]);
    assert.equal(await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'isValidSignature', args: [`0x${'12'.repeat(32)}`, '0x'] }), INVALID);
  });

  it('places an order: returns the digest, keeps the ETH, stores (sender, validTo), emits OrderPlacement as production', async () => {
    const order = await newOrder({ quoteId: -7n });
    const { result } = await simulateCreate(alice(), order);
    assert.equal(result, digestOf(order));
    const before = await client.getBalance({ address: ethFlow });
    const receipt = await create(alice(), order);
    assert.equal(await client.getBalance({ address: ethFlow }), before + order.sellAmount);
    assert.deepEqual(await stored(order), [alice().account.address, order.validTo]);
    assert.equal(await signatureCheck(order), MAGIC);

    const [placement, ...others] = eventsOf(receipt);
    assert.equal(others.length, 0);
    assert.equal(placement!.eventName, 'OrderPlacement');
    const args = placement!.args as { sender: Address; order: Record<string, unknown>; signature: { scheme: number; data: Hex }; data: Hex };
    assert.equal(args.sender, alice().account.address);
    assert.deepEqual(args.order, {
      sellToken: weth,
      buyToken: usdc,
      receiver: order.receiver,
      sellAmount: order.sellAmount,
      buyAmount: order.buyAmount,
      validTo: ETHFLOW_VALID_TO,
      appData: order.appData,
      feeAmount: 0n,
      kind: '0xf3b277728b3fee749481eb3e0b3b48980dbbab78658fc419025cb16eee346775',
      partiallyFillable: false,
      sellTokenBalance: '0x5a28e9363bb942b639270062aa6bb295f434bcdfc42c97267bf003f272060dc9',
      buyTokenBalance: '0x5a28e9363bb942b639270062aa6bb295f434bcdfc42c97267bf003f272060dc9',
    });
    assert.deepEqual(args.signature, { scheme: 0, data: ethFlow.toLowerCase() });
    assert.equal(args.data, `0xfffffffffffffff9${order.validTo.toString(16).padStart(8, '0')}`);
  });

  it('refuses a wrong ETH amount, a zero sell amount, an expired order and a missing receiver', async () => {
    const order = await newOrder({ feeAmount: 5n });
    await assertReverts(simulateCreate(alice(), order, order.sellAmount), 'IncorrectEthAmount');
    await assertReverts(simulateCreate(alice(), order, order.sellAmount + 6n), 'IncorrectEthAmount');
    await assertReverts(simulateCreate(alice(), await newOrder({ sellAmount: 0n })), 'NotAllowedZeroSellAmount');
    await assertReverts(simulateCreate(alice(), await newOrder({ validTo: (await chainTime()) - 1 })), 'OrderIsAlreadyExpired');
    await assertReverts(simulateCreate(alice(), await newOrder({ receiver: '0x0000000000000000000000000000000000000000' })), 'ReceiverMustBeSet');
  });

  it('refuses the same order twice, whatever its validTo and quote id, and after its invalidation too', async () => {
    const order = await newOrder();
    await create(alice(), order);
    const again = { ...order, validTo: order.validTo + 10, quoteId: 99n };
    await assertReverts(simulateCreate(bob(), again), 'OrderIsAlreadyOwned', [digestOf(order)]);
    await invalidate(alice(), order);
    await assertReverts(simulateCreate(alice(), order), 'OrderIsAlreadyOwned', [digestOf(order)]);
  });

  it('the creator invalidates a live order: OrderInvalidation, the ETH back to the creator, signature no longer valid', async () => {
    const order = await newOrder({ receiver: bob().account.address });
    await create(alice(), order);
    const before = await client.getBalance({ address: alice().account.address });
    const receipt = await invalidate(alice(), order);
    assert.equal(await client.getBalance({ address: alice().account.address }), before + order.sellAmount - gasCost(receipt));
    assert.deepEqual(eventsOf(receipt).map((e) => [e.eventName, e.args]), [['OrderInvalidation', { orderUid: uidOf(order) }]]);
    assert.deepEqual(await stored(order), ['0xFFfFfFffFFfffFFfFFfFFFFFffFFFffffFfFFFfF', order.validTo]);
    assert.equal(await signatureCheck(order), INVALID);
    await assertReverts(simulateInvalidate(alice(), order), 'NotAllowedToInvalidateOrder', [digestOf(order)]);
  });

  it('a stranger may not invalidate a live order, nor anyone an unknown one', async () => {
    const order = await newOrder();
    await create(alice(), order);
    await assertReverts(simulateInvalidate(bob(), order), 'NotAllowedToInvalidateOrder', [digestOf(order)]);
    const unknown = await newOrder();
    await assertReverts(simulateInvalidate(alice(), unknown), 'NotAllowedToInvalidateOrder', [digestOf(unknown)]);
    assert.equal(await signatureCheck(order), MAGIC);
  });

  it('after the user validTo: the signature is invalid and anyone refunds it to the creator with OrderRefund; the batch call skips what it may not', async () => {
    const now = await chainTime();
    const expiring = await newOrder({ validTo: now + 30, feeAmount: 3n });
    const live = await newOrder({ validTo: now + 7200 });
    await create(alice(), expiring);
    await create(alice(), live);
    await passTime(31);
    assert.equal(await signatureCheck(expiring), INVALID);
    assert.equal(await signatureCheck(live), MAGIC);

    const before = await client.getBalance({ address: alice().account.address });
    const receipt = await send(
      bob().writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'invalidateOrdersIgnoringNotAllowed', args: [[live, expiring, await newOrder()]] }),
    );
    // sell amount and fee come back to the creator, not to the caller
    assert.equal(await client.getBalance({ address: alice().account.address }), before + expiring.sellAmount + expiring.feeAmount);
    assert.deepEqual(eventsOf(receipt).map((e) => [e.eventName, e.args]), [['OrderRefund', { orderUid: uidOf(expiring), refunder: bob().account.address }]]);
    assert.equal((await stored(live))[0], alice().account.address);
    assert.equal((await stored(expiring))[0], '0xFFfFfFffFFfffFFfFFfFFFFFffFFFffffFfFFFfF');
  });

  it('wrapAll() wraps the whole native balance into the devnet WETH (deposit), and a refund unwraps what is missing', async () => {
    const order = await newOrder();
    await create(alice(), order);
    const native = await client.getBalance({ address: ethFlow });
    const wethBefore = await client.readContract({ address: weth, abi: devnetTokenAbi, functionName: 'balanceOf', args: [ethFlow] });
    await send(bob().writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'wrapAll' }));
    assert.equal(await client.getBalance({ address: ethFlow }), 0n);
    assert.equal(await client.readContract({ address: weth, abi: devnetTokenAbi, functionName: 'balanceOf', args: [ethFlow] }), wethBefore + native);

    const before = await client.getBalance({ address: alice().account.address });
    const receipt = await invalidate(alice(), order);
    assert.equal(await client.getBalance({ address: alice().account.address }), before + order.sellAmount - gasCost(receipt));
    assert.equal(await client.readContract({ address: weth, abi: devnetTokenAbi, functionName: 'balanceOf', args: [ethFlow] }), wethBefore + native - order.sellAmount);
  });
});
