/**
 * What a subscriber signs (EIP-712, domain `{name: "batchbook Notifications", version: "1"}`, no chainId, so one
 * signature serves every network), and how it is checked: an EOA by recovery, a smart-contract wallet by
 * ERC-1271 `isValidSignature` on any served network where the account has code.
 *
 * @example
 *   const signature = await account.signTypedData(subscribeTypedData({ account, channel: 'webhook', target, deadline }));
 */
import { hashTypedData, recoverAddress, type Address, type Hex, type TypedDataDefinition } from 'viem';

export const SUBSCRIPTION_DOMAIN = { name: 'batchbook Notifications', version: '1' } as const;

const SUBSCRIBE_TYPES = {
  Subscribe: [
    { name: 'account', type: 'address' },
    { name: 'channel', type: 'string' },
    { name: 'target', type: 'string' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

/** With `types`: the signature covers them, in the order and spelling sent (issue 19, major 5). */
const SUBSCRIBE_WITH_TYPES_TYPES = {
  Subscribe: [
    { name: 'account', type: 'address' },
    { name: 'channel', type: 'string' },
    { name: 'target', type: 'string' },
    { name: 'types', type: 'string[]' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

const UNSUBSCRIBE_TYPES = {
  Unsubscribe: [
    { name: 'account', type: 'address' },
    { name: 'id', type: 'string' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

export function subscribeTypedData(m: { account: Address; channel: string; target: string; deadline: number | bigint }): TypedDataDefinition<typeof SUBSCRIBE_TYPES, 'Subscribe'> {
  return { domain: SUBSCRIPTION_DOMAIN, types: SUBSCRIBE_TYPES, primaryType: 'Subscribe', message: { account: m.account, channel: m.channel, target: m.target, deadline: BigInt(m.deadline) } };
}

/**
 * What a request with `types` signs: `Subscribe(address account,string channel,string target,string[] types,uint256 deadline)`,
 * the types exactly as sent.
 *
 * @example
 *   await account.signTypedData(subscribeWithTypesTypedData({ account, channel: 'webhook', target, types: ['order_filled'], deadline }));
 */
export function subscribeWithTypesTypedData(m: { account: Address; channel: string; target: string; types: readonly string[]; deadline: number | bigint }): TypedDataDefinition<typeof SUBSCRIBE_WITH_TYPES_TYPES, 'Subscribe'> {
  return { domain: SUBSCRIPTION_DOMAIN, types: SUBSCRIBE_WITH_TYPES_TYPES, primaryType: 'Subscribe', message: { account: m.account, channel: m.channel, target: m.target, types: [...m.types], deadline: BigInt(m.deadline) } };
}

/** What a subscribe request signs: with `types` the message that covers them, without them the original one. */
export function subscriptionRequestTypedData(m: { account: Address; channel: string; target: string; types?: readonly string[]; deadline: number | bigint }): TypedDataDefinition {
  return (m.types === undefined ? subscribeTypedData(m) : subscribeWithTypesTypedData({ ...m, types: m.types })) as TypedDataDefinition;
}

export function unsubscribeTypedData(m: { account: Address; id: string; deadline: number | bigint }): TypedDataDefinition<typeof UNSUBSCRIBE_TYPES, 'Unsubscribe'> {
  return { domain: SUBSCRIPTION_DOMAIN, types: UNSUBSCRIBE_TYPES, primaryType: 'Unsubscribe', message: { account: m.account, id: m.id, deadline: BigInt(m.deadline) } };
}

/** An ERC-1271 check on one network: null when the account has no code there. Rejects on a transport failure. */
export type ContractSignatureCheck = (account: Address, digest: Hex, signature: Hex) => Promise<boolean | null>;

/** True when `account` signed `typedData`: as an EOA, or as a contract wallet on one of the networks. */
export async function isSignedBy(account: Address, typedData: Parameters<typeof hashTypedData>[0], signature: Hex, contracts: ContractSignatureCheck[]): Promise<boolean> {
  const digest = hashTypedData(typedData);
  if (signature.length === 132) {
    try {
      if ((await recoverAddress({ hash: digest, signature })).toLowerCase() === account.toLowerCase()) return true;
    } catch {
      // not a recoverable ECDSA signature: maybe a contract wallet's
    }
  }
  for (const check of contracts) if ((await check(account, digest, signature)) === true) return true;
  return false;
}
