import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { encodeAbiParameters, encodeEventTopics, getAbiItem, parseAbi, toEventSelector, type Abi, type AbiEvent, type Hex } from 'viem';
import { computeOrderUid, ETHFLOW_ABI, orderDigest } from '../../protocol/index.js';
import { decodeLogs, touchedBy, ZERO_ADDRESS, type RawLog } from './decode-logs.js';
import { EVENT_SIGNATURES, TOPICS } from './event-topics.js';
import { holderDeltas } from './store-events.js';

const settlement = '0x9008d19f58aabd9ed0d60971565aa8510560ab41';
const token = '0x1111111111111111111111111111111111111111';
const pool = '0x2222222222222222222222222222222222222222';
const factory = '0x3333333333333333333333333333333333333333';
const alice = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const bob = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const uid = `0x${'ab'.repeat(32)}${alice.slice(2)}ffffffff` as Hex;
const roles = { settlement, tokens: new Set([token]), pools: new Set([pool]), factories: new Set([factory]) };

const events = parseAbi([
  'event Trade(address indexed owner, address sellToken, address buyToken, uint256 sellAmount, uint256 buyAmount, uint256 feeAmount, bytes orderUid)',
  'event Settlement(address indexed solver)',
  'event OrderInvalidated(address indexed owner, bytes orderUid)',
  'event PreSignature(address indexed owner, bytes orderUid, bool signed)',
  'event Interaction(address indexed target, uint256 value, bytes4 selector)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Deposit(address indexed dst, uint256 wad)',
  'event Withdrawal(address indexed src, uint256 wad)',
  'event Sync(uint112 reserve0, uint112 reserve1)',
  'event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)',
  'event PairCreated(address indexed token0, address indexed token1, address pair, uint256)',
]);

let logIndex = 0;
function log(address: string, eventName: string, args: Record<string, unknown>, data: Hex): RawLog {
  const topics = encodeEventTopics({ abi: events, eventName: eventName as never, args: args as never }) as Hex[];
  return { address: address as Hex, topics, data, blockNumber: 7, blockHash: `0x${'07'.repeat(32)}`, logIndex: logIndex++, transactionHash: `0x${'0f'.repeat(32)}` };
}

describe('event topics', () => {
  it('are the keccak of the signatures', () => {
    for (const [name, signature] of Object.entries(EVENT_SIGNATURES)) {
      assert.equal(TOPICS[name as keyof typeof TOPICS], toEventSelector(signature), name);
    }
  });

  it('match the events of the GPv2Settlement artifact', () => {
    const path = createRequire(import.meta.url).resolve('@cowprotocol/contracts/lib/contracts/GPv2Settlement.json');
    const abi = (JSON.parse(readFileSync(path, 'utf8')) as { abi: Abi }).abi;
    const fromArtifact = new Map(abi.filter((x): x is AbiEvent => x.type === 'event').map((e) => [e.name, toEventSelector(e)]));
    for (const name of ['Trade', 'Settlement', 'OrderInvalidated', 'PreSignature', 'Interaction'] as const) {
      assert.equal(fromArtifact.get(name), TOPICS[name], name);
    }
  });
});

describe('decodeLogs', () => {
  it('decodes every followed event by emitter role', () => {
    const logs = [
      log(settlement, 'Trade', { owner: alice }, encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }], [token, bob, 10n, 20n, 1n, uid])),
      log(settlement, 'Settlement', { solver: bob }, '0x'),
      log(settlement, 'OrderInvalidated', { owner: alice }, encodeAbiParameters([{ type: 'bytes' }], [uid])),
      log(settlement, 'PreSignature', { owner: alice }, encodeAbiParameters([{ type: 'bytes' }, { type: 'bool' }], [uid, true])),
      log(settlement, 'Interaction', { target: pool }, encodeAbiParameters([{ type: 'uint256' }, { type: 'bytes4' }], [5n, '0x022c0d9f'])),
      log(token, 'Transfer', { from: alice, to: bob }, encodeAbiParameters([{ type: 'uint256' }], [7n])),
      log(token, 'Deposit', { dst: alice }, encodeAbiParameters([{ type: 'uint256' }], [100n])),
      log(token, 'Withdrawal', { src: bob }, encodeAbiParameters([{ type: 'uint256' }], [3n])),
      log(pool, 'Sync', {}, encodeAbiParameters([{ type: 'uint112' }, { type: 'uint112' }], [1000n, 2000n])),
      log(pool, 'Swap', { sender: alice, to: bob }, encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }], [1n, 0n, 0n, 2n])),
      log(factory, 'PairCreated', { token0: token, token1: bob }, encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [pool, 1n])),
    ];
    const { events: e, skipped } = decodeLogs(logs, roles);
    assert.equal(skipped, 0);
    assert.deepEqual(e.trades.map((t) => [t.owner, t.sellToken, t.buyToken, t.sellAmount, t.buyAmount, t.feeAmount, t.orderUid]), [[alice, token, bob, 10n, 20n, 1n, uid]]);
    assert.equal(e.settlements[0].solver, bob);
    assert.equal(e.invalidations[0].orderUid, uid);
    assert.deepEqual([e.presignatures[0].owner, e.presignatures[0].signed], [alice, true]);
    assert.deepEqual([e.interactions[0].target, e.interactions[0].value, e.interactions[0].selector], [pool, 5n, '0x022c0d9f']);
    assert.deepEqual(
      e.transfers.map((t) => [t.kind, t.from, t.to, t.value]),
      [
        ['transfer', alice, bob, 7n],
        ['deposit', ZERO_ADDRESS, alice, 100n],
        ['withdrawal', bob, ZERO_ADDRESS, 3n],
      ],
    );
    assert.deepEqual([e.syncs[0].reserve0, e.syncs[0].reserve1], [1000n, 2000n]);
    assert.deepEqual([e.swaps[0].sender, e.swaps[0].to, e.swaps[0].amount0In, e.swaps[0].amount1Out], [alice, bob, 1n, 2n]);
    assert.deepEqual([e.pairs[0].pair, e.pairs[0].token0, e.pairs[0].factory], [pool, token, factory]);
    assert.equal(e.trades[0].txHash, `0x${'0f'.repeat(32)}`);

    const touched = touchedBy(e);
    assert.deepEqual(touched.orderUids, [uid]);
    assert.deepEqual(new Set(touched.owners), new Set([alice, bob]));
    assert.deepEqual(new Set(touched.tokens), new Set([token, bob]));
    assert.deepEqual(touched.pools, [pool]);
  });

  it('ignores events from addresses without that role, ERC-721 transfers and malformed data', () => {
    const erc721 = { ...log(token, 'Transfer', { from: alice, to: bob }, '0x'), topics: [TOPICS.Transfer, `0x${'00'.repeat(12)}${alice.slice(2)}`, `0x${'00'.repeat(12)}${bob.slice(2)}`, `0x${'00'.repeat(31)}01`] as Hex[] };
    const logs = [
      log(bob, 'Transfer', { from: alice, to: bob }, encodeAbiParameters([{ type: 'uint256' }], [7n])),
      log(token, 'Sync', {}, encodeAbiParameters([{ type: 'uint112' }, { type: 'uint112' }], [1n, 2n])),
      erc721,
      log(settlement, 'Trade', { owner: alice }, '0x1234'),
    ];
    const { events: e, skipped } = decodeLogs(logs, roles);
    assert.equal(skipped, 4);
    assert.equal(e.transfers.length + e.syncs.length + e.trades.length, 0);
  });
});

describe('holderDeltas', () => {
  it('nets transfers per holder and leaves the zero address out', () => {
    const base = { blockNumber: 1, logIndex: 0, txHash: '0x' as Hex, token: token as Hex };
    const deltas = holderDeltas([
      { ...base, from: ZERO_ADDRESS, to: alice, value: 100n, kind: 'deposit' },
      { ...base, from: alice, to: bob, value: 30n, kind: 'transfer' },
      { ...base, from: bob, to: alice, value: 30n, kind: 'transfer' },
      { ...base, from: alice, to: ZERO_ADDRESS, value: 1n, kind: 'withdrawal' },
    ]);
    assert.deepEqual([...deltas.values()].map((d) => [d.holder, d.delta]), [[alice, 99n]]);
  });
});

describe('eth-flow events', () => {
  const ethFlow = '0x4444444444444444444444444444444444444444';
  const weth = '0x5555555555555555555555555555555555555555';
  const domain = `0x${'12'.repeat(32)}` as Hex;
  const ethRoles = { ...roles, ethFlows: new Set([ethFlow]), orderDomain: domain };
  const order = {
    sellToken: weth, buyToken: token, receiver: alice, sellAmount: 10n ** 18n, buyAmount: 5n, validTo: 0xffffffff,
    appData: `0x${'cd'.repeat(32)}` as Hex, feeAmount: 0n,
    kind: '0xf3b277728b3fee749481eb3e0b3b48980dbbab78658fc419025cb16eee346775' as Hex, partiallyFillable: false,
    sellTokenBalance: '0x5a28e9363bb942b639270062aa6bb295f434bcdfc42c97267bf003f272060dc9' as Hex,
    buyTokenBalance: '0x5a28e9363bb942b639270062aa6bb295f434bcdfc42c97267bf003f272060dc9' as Hex,
  } as const;
  const placement = (data: Hex, signature = { scheme: 0, data: ethFlow as Hex }): RawLog => {
    const topics = encodeEventTopics({ abi: ETHFLOW_ABI, eventName: 'OrderPlacement', args: { sender: bob } }) as Hex[];
    const body = encodeAbiParameters(getAbiItem({ abi: ETHFLOW_ABI, name: 'OrderPlacement' }).inputs.slice(1), [order, signature, data]);
    return { address: ethFlow, topics, data: body, blockNumber: 9, blockHash: `0x${'09'.repeat(32)}`, logIndex: logIndex++, transactionHash: `0x${'0e'.repeat(32)}` };
  };

  it('decodes a placement (uid = digest ‖ owner from the signature ‖ validTo) and the user data', () => {
    const { events: out, skipped } = decodeLogs([placement('0x000000000000002a6553f100')], ethRoles);
    assert.equal(skipped, 0);
    const [p] = out.ethflowPlacements;
    const expected = { ...order, kind: 'sell', sellTokenBalance: 'erc20', buyTokenBalance: 'erc20' } as const;
    assert.equal(p!.orderUid, computeOrderUid(orderDigest(expected, domain), ethFlow, 0xffffffff));
    assert.equal(p!.sender, bob);
    assert.equal(p!.owner, ethFlow);
    assert.equal(p!.quoteId, 42n);
    assert.equal(p!.userValidTo, 1_700_000_000);
    assert.deepEqual(touchedBy(out).orderUids, [p!.orderUid]);
  });

  it('skips malformed placements (data not 12 bytes, undecodable body, unknown scheme) and decodes what follows', () => {
    const garbage = { ...placement('0x000000000000002a6553f100'), data: '0xdeadbeef' as Hex };
    const invalidation: RawLog = {
      address: ethFlow, topics: [TOPICS.OrderInvalidation], data: encodeAbiParameters([{ type: 'bytes' }], [uid]),
      blockNumber: 9, blockHash: `0x${'09'.repeat(32)}`, logIndex: logIndex++, transactionHash: `0x${'0e'.repeat(32)}`,
    };
    const { events: out, skipped } = decodeLogs(
      [placement('0x000000000000002a6553f10000'), placement('0x'), garbage, placement('0x000000000000002a6553f100', { scheme: 7, data: '0x' }), invalidation, placement('0xffffffffffffffff00000000')],
      ethRoles,
    );
    assert.equal(skipped, 4);
    assert.equal(out.ethflowPlacements.length, 1);
    assert.equal(out.ethflowPlacements[0]!.quoteId, -1n);
    assert.deepEqual(out.ethflowInvalidations.map((e) => e.orderUid), [uid]);
  });
});
