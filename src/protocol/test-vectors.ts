/**
 * Reference vectors for the protocol tests (orderbook.md §6; cowprotocol/services `crates/model/src/order.rs`
 * tests `order_creation_signature` and `order_cancellation_signature_typed_data`). Test-only; not exported.
 */
import type { Hex } from 'viem';
import type { Order } from './order.js';

/** anvil/Hardhat default dev accounts (public, well-known keys). */
export const DEV_ACCOUNT_0 = {
  address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
} as const;
export const DEV_ACCOUNT_1 = {
  address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
} as const;

/** §6.6: the contracts' GPv2Signing test order. */
export const UID_VECTOR = {
  domainSeparator: '0x74e0b11bd18120612556bae4578cfd3a254d7e2495f543c569a92ff5794d9b09',
  owner: DEV_ACCOUNT_1.address,
  order: {
    sellToken: '0x0101010101010101010101010101010101010101',
    buyToken: '0x0202020202020202020202020202020202020202',
    receiver: '0x0303030303030303030303030303030303030303',
    sellAmount: 0x0246ddf97976680000n,
    buyAmount: 0xb98bc829a6f90000n,
    validTo: 0xffffffff,
    appData: '0x0000000000000000000000000000000000000000000000000000000000000000',
    feeAmount: 0x0de0b6b3a7640000n,
    kind: 'sell',
    partiallyFillable: false,
    sellTokenBalance: 'erc20',
    buyTokenBalance: 'erc20',
  } satisfies Order,
  structHash: '0x7d9bf070168f9950003bdad00194ef63a5389dd0b594a1288407d551abf147d5',
  uid: '0x0e45d31fd31b28c26031cdd81b35a8938b2ccca2cc425fcf440fd3bfed1eede970997970c51812dc3a010c7d01b50e0d17dc79c8ffffffff',
  eip712Signature:
    '0x59c0f5c151071c1320575f6da826a6c276525bbe733234bad1afb2879657d65d2afe6812746f4cc97f28f3a5dfdbfc7087511695d23da5e9792cd7ed6c9ddeb71c',
  ethsignSignature:
    '0xbf3bc5a9b60d08dc05768320553ba59a6f301d985903618cfc002e8a61cb78b55d4a474a43a60193d90cda35ff2764f3913b47e5b5b87770064f549fe871afcc1b',
} as const;

/** §6.7 extra single-cancellation vector. */
export const CANCELLATION_VECTOR = {
  domainSeparator: '0xf8a1143d44c67470a791201b239ff6b0ecc8910aa9682bebd08145f5fd84722b',
  orderUid: `0x${'2a'.repeat(56)}` as Hex,
  signer: DEV_ACCOUNT_0.address,
  structHash: '0xc386a52e39eaf40d42c0d98aabdfb09cb81c8ada03581ed2f16c40f7e56c1399',
  digest: '0xc25647ef2e127409af05318e4d13d1deaa7fd4160c8ac1015160cba3b3e8d6e0',
  eip712Signature:
    '0xf2c69310a4dbcd78feabfd802df296ca4650681e01872f667251916ed3e9a2e14928382316607594a77c620e4bc4536e6fe145ee993a5ccc38fda929e86830231b',
  ethsignSignature:
    '0x5fef0aed159777403f964da946b2b6c7d2ca6a931f009328c17ed481bf5fe25b46c8da3dfdca2657c9e6e7fbd3a1abbf52ee0ccaf610395fb2445256f5d24eb41b',
} as const;
