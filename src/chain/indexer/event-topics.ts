/**
 * topic0 of every event the indexer follows (keccak256 of the canonical signature; a test recomputes them
 * and checks the settlement ones against the @cowprotocol/contracts artifact).
 */
import type { Hex } from 'viem';

export const TOPICS = {
  // GPv2Settlement
  Trade: '0xa07a543ab8a018198e99ca0184c93fe9050a79400a0a723441f84de1d972cc17',
  Settlement: '0x40338ce1a7c49204f0099533b1e9a7ee0a3d261f84974ab7af36105b8c4e9db4',
  OrderInvalidated: '0x875b6cb035bbd4ac6500fabc6d1e4ca5bdc58a3e2b424ccb5c24cdbebeb009a9',
  PreSignature: '0x01bf7c8b0ca55deecbea89d7e58295b7ffbf685fd0d96801034ba8c6ffe1c68d',
  Interaction: '0xed99827efb37016f2275f98c4bcf71c7551c75d59e9b450f79fa32e60be672c2',
  // ERC-20 and WETH9
  Transfer: '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
  Deposit: '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c',
  Withdrawal: '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65',
  // Uniswap V2 pair and factory
  Sync: '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1',
  Swap: '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822',
  PairCreated: '0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9',
  // eth-flow contracts
  OrderPlacement: '0xcf5f9de2984132265203b5c335b25727702ca77262ff622e136baa7362bf1da9',
  OrderInvalidation: '0xb8bad102ac8bbacfef31ff1c906ec6d951c230b4dce750bb0376b812ad35852a',
  OrderRefund: '0x195271068a288191e4b265c641a56b9832919f69e9e7d6c2f31ba40278aeb85a',
} as const satisfies Record<string, Hex>;

export const EVENT_SIGNATURES: Record<keyof typeof TOPICS, string> = {
  Trade: 'Trade(address,address,address,uint256,uint256,uint256,bytes)',
  Settlement: 'Settlement(address)',
  OrderInvalidated: 'OrderInvalidated(address,bytes)',
  PreSignature: 'PreSignature(address,bytes,bool)',
  Interaction: 'Interaction(address,uint256,bytes4)',
  Transfer: 'Transfer(address,address,uint256)',
  Deposit: 'Deposit(address,uint256)',
  Withdrawal: 'Withdrawal(address,uint256)',
  Sync: 'Sync(uint112,uint112)',
  Swap: 'Swap(address,uint256,uint256,uint256,uint256,address)',
  PairCreated: 'PairCreated(address,address,address,uint256)',
  OrderPlacement:
    'OrderPlacement(address,(address,address,address,uint256,uint256,uint32,bytes32,uint256,bytes32,bool,bytes32,bytes32),(uint8,bytes),bytes)',
  OrderInvalidation: 'OrderInvalidation(bytes)',
  OrderRefund: 'OrderRefund(bytes,address)',
};

export const SETTLEMENT_TOPICS: Hex[] = [TOPICS.Trade, TOPICS.Settlement, TOPICS.OrderInvalidated, TOPICS.PreSignature, TOPICS.Interaction];
export const TOKEN_TOPICS: Hex[] = [TOPICS.Transfer, TOPICS.Deposit, TOPICS.Withdrawal];
export const POOL_TOPICS: Hex[] = [TOPICS.Sync, TOPICS.Swap];
export const FACTORY_TOPICS: Hex[] = [TOPICS.PairCreated];
export const ETHFLOW_TOPICS: Hex[] = [TOPICS.OrderPlacement, TOPICS.OrderInvalidation, TOPICS.OrderRefund];
