/**
 * Reads of the maintained holder balances. The largest holders of a token are one range scan of the
 * (chain_id, token, balance desc) index.
 *
 * @example
 *   const top = await topTokenHolders(db, 1, usdc, 100); // [{ holder, balance }] largest first
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import { fromNumeric, toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';

export interface TokenHolder {
  holder: Address;
  balance: bigint;
}

export async function topTokenHolders(db: Kysely<DB>, chainId: number, token: Address, limit: number): Promise<TokenHolder[]> {
  const rows = await db
    .selectFrom('token_holder_balances')
    .select(['holder', 'balance'])
    .where('chain_id', '=', chainId)
    .where('token', '=', toBytes(token))
    .where('balance', '>', '0')
    .orderBy('balance', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ holder: toHex(r.holder) as Address, balance: fromNumeric(r.balance) }));
}
