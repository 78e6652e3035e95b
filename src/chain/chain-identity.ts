/**
 * Indexed data belongs to one chain. A chain is identified by its block-0 hash: when the devnet was rebuilt,
 * everything stored for that chain id is deleted in one transaction before anything is served, so data of a
 * chain that no longer exists never is. A real chain (RPC_URL_*) is never reset automatically: a changed
 * block 0 there means the URL points at another chain (a fork, a testnet, a misconfiguration), and deleting
 * its orders would be irreversible, so the node refuses to start (ChainIdentityError) and deletes nothing.
 */
import { sql, type Kysely } from 'kysely';
import type { Hex } from 'viem';
import type { DB } from '../db/schema.js';
import { toBytes, toHex } from '../db/codec.js';

/** Tables with a chain_id column, children first. */
async function chainTables(db: Kysely<DB>): Promise<string[]> {
  const rows = await sql<{ table_name: string }>`
    select c.table_name from information_schema.columns c
    join information_schema.tables t on t.table_name = c.table_name and t.table_schema = c.table_schema
    where c.column_name = 'chain_id' and c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
    order by c.table_name`.execute(db);
  return rows.rows.map((r) => r.table_name).filter((t) => t !== 'chain_identity');
}

export interface ChainIdentityResult {
  /** true when data of an earlier chain with this id was deleted */
  reset: boolean;
}

export class ChainIdentityError extends Error {
  constructor(readonly chainId: number, readonly stored: Hex, readonly actual: Hex) {
    super(
      `chain ${chainId}: the RPC node's block 0 is ${actual}, but this database holds data of chain ${chainId} with block 0 ${stored}. ` +
        'The RPC URL points at another chain (fork, testnet or wrong node). Nothing was deleted; fix RPC_URL_' + chainId + ' or use another database.',
    );
    this.name = 'ChainIdentityError';
  }
}

export interface ChainIdentityOptions {
  /** the chain may be reset when its block 0 changed (the devnet only) */
  resettable: boolean;
  /** reset even when block 0 is the same (a fresh devnet) */
  forceReset?: boolean;
}

export async function ensureChainIdentity(db: Kysely<DB>, chainId: number, genesisHash: Hex, options: ChainIdentityOptions): Promise<ChainIdentityResult> {
  const { resettable, forceReset = false } = options;
  const tables = await chainTables(db);
  return db.transaction().execute(async (tx) => {
    const stored = await tx.selectFrom('chain_identity').select('genesis_hash').where('chain_id', '=', chainId).forUpdate().executeTakeFirst();
    const same = stored !== undefined && toHex(stored.genesis_hash) === genesisHash.toLowerCase();
    if (same && !forceReset) return { reset: false };
    if (stored !== undefined && !same && !resettable) throw new ChainIdentityError(chainId, toHex(stored.genesis_hash) as Hex, genesisHash.toLowerCase() as Hex);
    for (const table of tables) await sql`delete from ${sql.table(table)} where chain_id = ${chainId}`.execute(tx);
    await tx
      .insertInto('chain_identity')
      .values({ chain_id: chainId, genesis_hash: toBytes(genesisHash) })
      .onConflict((oc) => oc.column('chain_id').doUpdateSet({ genesis_hash: toBytes(genesisHash), created_at: new Date() }))
      .execute();
    return { reset: stored !== undefined };
  });
}
