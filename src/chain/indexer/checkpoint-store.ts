/**
 * The indexer's own bookkeeping in the database: the checkpoint (last fully indexed block and its hash), the
 * headers of recently indexed blocks (to find the common ancestor after a reorg) and the followed contracts.
 */
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import type { BlockHeader } from './block-headers.js';

export interface Checkpoint {
  number: number;
  hash: Hex;
}

export type SourceKind = 'settlement' | 'token' | 'pool' | 'factory' | 'ethflow';

export interface Source {
  address: Address;
  kind: SourceKind;
  /** logs are stored from this block ... */
  fromBlock: number;
  /** ... up to this block, or up to the checkpoint when null (live) */
  backfilledTo: number | null;
}

export const sourceKey = (kind: SourceKind, address: string): string => `${kind}:${address.toLowerCase()}`;

export async function readCheckpoint(db: Kysely<DB>, chainId: number, name: string): Promise<Checkpoint | null> {
  const row = await db.selectFrom('indexer_checkpoints').select(['block_number', 'block_hash']).where('chain_id', '=', chainId).where('name', '=', name).executeTakeFirst();
  return row ? { number: Number(row.block_number), hash: toHex(row.block_hash) } : null;
}

export async function writeCheckpoint(db: Kysely<DB>, chainId: number, name: string, checkpoint: Checkpoint): Promise<void> {
  await db
    .insertInto('indexer_checkpoints')
    .values({ chain_id: chainId, name, block_number: checkpoint.number, block_hash: toBytes(checkpoint.hash) })
    .onConflict((oc) => oc.columns(['chain_id', 'name']).doUpdateSet({ block_number: checkpoint.number, block_hash: toBytes(checkpoint.hash), updated_at: new Date() }))
    .execute();
}

export async function deleteCheckpoint(db: Kysely<DB>, chainId: number, name: string): Promise<void> {
  await db.deleteFrom('indexer_checkpoints').where('chain_id', '=', chainId).where('name', '=', name).execute();
}

/** Stores headers (replacing any at the same height) and forgets those below `keepFrom`. */
export async function rememberBlocks(db: Kysely<DB>, chainId: number, headers: BlockHeader[], keepFrom: number): Promise<void> {
  if (headers.length > 0) {
    await db
      .insertInto('indexed_blocks')
      .values(headers.map((h) => ({ chain_id: chainId, number: h.number, hash: toBytes(h.hash), parent_hash: toBytes(h.parentHash), timestamp: h.timestamp })))
      .onConflict((oc) =>
        oc.columns(['chain_id', 'number']).doUpdateSet((eb) => ({ hash: eb.ref('excluded.hash'), parent_hash: eb.ref('excluded.parent_hash'), timestamp: eb.ref('excluded.timestamp') })),
      )
      .execute();
  }
  await db.deleteFrom('indexed_blocks').where('chain_id', '=', chainId).where('number', '<', keepFrom).execute();
}

/** Remembered headers at or below `atOrBelow`, newest first. */
export async function recentBlocks(db: Kysely<DB>, chainId: number, atOrBelow: number, limit: number): Promise<Array<{ number: number; hash: Hex }>> {
  const rows = await db
    .selectFrom('indexed_blocks')
    .select(['number', 'hash'])
    .where('chain_id', '=', chainId)
    .where('number', '<=', atOrBelow)
    .orderBy('number', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ number: Number(r.number), hash: toHex(r.hash) }));
}

export async function readSources(db: Kysely<DB>, chainId: number, name: string): Promise<Source[]> {
  const rows = await db.selectFrom('indexer_sources').select(['address', 'kind', 'from_block', 'backfilled_to']).where('chain_id', '=', chainId).where('name', '=', name).execute();
  return rows.map((r) => ({
    address: toHex(r.address) as Address,
    kind: r.kind,
    fromBlock: Number(r.from_block),
    backfilledTo: r.backfilled_to === null ? null : Number(r.backfilled_to),
  }));
}

export async function writeSources(db: Kysely<DB>, chainId: number, name: string, sources: Source[]): Promise<void> {
  if (sources.length === 0) return;
  const size = 5_000;
  for (let i = 0; i < sources.length; i += size) {
    await db
      .insertInto('indexer_sources')
      .values(
        sources.slice(i, i + size).map((s) => ({ chain_id: chainId, name, address: toBytes(s.address), kind: s.kind, from_block: s.fromBlock, backfilled_to: s.backfilledTo })),
      )
      .onConflict((oc) =>
        oc.columns(['chain_id', 'name', 'address', 'kind']).doUpdateSet((eb) => ({ from_block: eb.ref('excluded.from_block'), backfilled_to: eb.ref('excluded.backfilled_to') })),
      )
      .execute();
  }
}

/** After a rewind to `block`: nothing is back-filled above it any more, and pools created above it are gone. */
export async function rewindSources(db: Kysely<DB>, chainId: number, name: string, block: number, removedPools: Address[]): Promise<void> {
  await db.updateTable('indexer_sources').set({ backfilled_to: block }).where('chain_id', '=', chainId).where('name', '=', name).where('backfilled_to', '>', block).execute();
  if (removedPools.length > 0) {
    await db
      .deleteFrom('indexer_sources')
      .where('chain_id', '=', chainId)
      .where('name', '=', name)
      .where('kind', '=', 'pool')
      .where('address', 'in', removedPools.map(toBytes))
      .execute();
  }
}

export async function deleteSources(db: Kysely<DB>, chainId: number, name: string): Promise<void> {
  await db.deleteFrom('indexer_sources').where('chain_id', '=', chainId).where('name', '=', name).execute();
}
