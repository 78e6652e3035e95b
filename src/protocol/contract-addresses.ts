/**
 * Canonical CoW Protocol contract addresses (lowercase). Identical on every chain the order book
 * serves (cowprotocol/contracts `networks.json`; the spec states the same for chains not listed there).
 * The devnet deploys the contracts at these same addresses.
 */
import type { Address } from 'viem';

/** GPv2Settlement: the EIP-712 `verifyingContract` of orders and cancellations. */
export const SETTLEMENT_ADDRESS: Address = '0x9008d19f58aabd9ed0d60971565aa8510560ab41';

/** GPv2VaultRelayer: owners approve THIS contract (not the settlement) for their sell token. */
export const VAULT_RELAYER_ADDRESS: Address = '0xc92e8bdf79f0507f65a392b0ab4667716bfe0110';

/** Staging ("barn") settlement; signing against it yields a different domain separator. */
export const BARN_SETTLEMENT_ADDRESS: Address = '0xf553d092b50bdcbdded1a99af2ca29fbe5e2cb13';

/** Staging ("barn") vault relayer. */
export const BARN_VAULT_RELAYER_ADDRESS: Address = '0xc7242d167563352e2bca4d71c043fbe542db8fb2';

/** Marker used as `buyToken` for orders that buy the chain's native asset. */
export const BUY_ETH_ADDRESS: Address = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

/** The zero address (a `null` receiver is hashed as this). */
export const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';
