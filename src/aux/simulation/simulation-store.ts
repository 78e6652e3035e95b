/**
 * Stored simulation runs (table `simulations`, migration 004): the request and the result as sent on the wire,
 * so that a result's `link` can be opened later.
 *
 * @example
 *   await store.save({ id, chainId, provider: 'fork', blockNumber: 12, status: true, request, result, client: '10.0.0.7' });
 *   await store.capClient('10.0.0.7', 100); // deletes that client's runs beyond its 100 newest
 *   const run = await store.get(31337, id); // null when unknown on that chain
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { SimulationResultJson, StoredRunJson } from './schemas.js';

export interface RunToSave {
  id: string;
  chainId: number;
  provider: string;
  blockNumber: number | null;
  status: boolean;
  request: StoredRunJson['request'];
  result: SimulationResultJson;
  /** who asked (http/client-identity.ts clientKey); runs are capped per client */
  client: string | null;
}

export class SimulationStore {
  constructor(private readonly db: Kysely<DB>) {}

  async save(run: RunToSave): Promise<Date> {
    const row = await this.db
      .insertInto('simulations')
      .values({
        id: run.id,
        chain_id: run.chainId,
        provider: run.provider,
        block_number: run.blockNumber,
        status: run.status,
        request: JSON.stringify(run.request),
        result: JSON.stringify(run.result),
        client: run.client,
      })
      .returning('created_at')
      .executeTakeFirstOrThrow();
    return new Date(row.created_at);
  }

  async get(chainId: number, id: string): Promise<StoredRunJson | null> {
    const row = await this.db
      .selectFrom('simulations')
      .select(['id', 'chain_id', 'created_at', sql<string>`request::text`.as('request_json'), sql<string>`result::text`.as('result_json')])
      .where('id', '=', id.toLowerCase())
      .where('chain_id', '=', chainId)
      .executeTakeFirst();
    if (!row) return null;
    return {
      id: row.id,
      chainId: row.chain_id,
      createdAt: new Date(row.created_at).toISOString(),
      request: JSON.parse(row.request_json) as StoredRunJson['request'],
      result: JSON.parse(row.result_json) as SimulationResultJson,
    };
  }

  /** Deletes the runs of `client` beyond its `keep` newest; returns how many. */
  async capClient(client: string, keep: number): Promise<number> {
    const newest = this.db
      .selectFrom('simulations')
      .select('id')
      .where('client', '=', client)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(keep);
    const result = await this.db
      .deleteFrom('simulations')
      .where('client', '=', client)
      .where('id', 'not in', newest)
      .executeTakeFirst();
    return Number(result.numDeletedRows ?? 0n);
  }

  /** Deletes runs created before `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    const result = await this.db.deleteFrom('simulations').where('created_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows ?? 0n);
  }
}
