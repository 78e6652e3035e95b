/**
 * App data: the JSON documents whose keccak256 an order signs as `appData`. Stored by hash over the exact
 * bytes received (never re-serialised); the zero hash stands for `{}`.
 */
import type { Kysely } from 'kysely';
import type { Hex } from 'viem';
import { appDataHash, parseAppDataDocument, EMPTY_APP_DATA_JSON, ZERO_APP_DATA, AppDataError, MAX_APP_DATA_BYTES } from '../protocol/index.js';
import { OrderBookError } from '../protocol/order-book-error.js';
import { toBytes } from '../db/codec.js';
import type { DB } from '../db/schema.js';

export interface PutAppDataResult {
  hash: Hex;
  created: boolean;
}

export class AppDataService {
  constructor(private readonly db: Kysely<DB>) {}

  /** Validates and stores a document; `expectedHash` (from the path) must equal its keccak256. */
  async put(fullAppData: string, expectedHash: Hex | null, db: Kysely<DB> = this.db): Promise<PutAppDataResult> {
    const { hash, bytes } = this.validate(fullAppData, expectedHash);
    const inserted = await db
      .insertInto('app_data')
      .values({ contract_app_data: toBytes(hash), full_app_data: bytes })
      .onConflict((oc) => oc.column('contract_app_data').doNothing())
      .returning('contract_app_data')
      .executeTakeFirst();
    if (inserted) return { hash, created: true };
    await this.checkNoConflict(hash, bytes, db);
    return { hash, created: false };
  }

  /** What `put` checks, without storing: an order's document is stored only with the accepted order. */
  async check(fullAppData: string, expectedHash: Hex | null): Promise<Hex> {
    const { hash, bytes } = this.validate(fullAppData, expectedHash);
    await this.checkNoConflict(hash, bytes, this.db);
    return hash;
  }

  private validate(fullAppData: string, expectedHash: Hex | null): { hash: Hex; bytes: Buffer } {
    const bytes = Buffer.from(fullAppData, 'utf8');
    if (bytes.length > MAX_APP_DATA_BYTES) {
      throw new OrderBookError('PayloadTooLarge', `app data is ${bytes.length} bytes, the limit is ${MAX_APP_DATA_BYTES}`);
    }
    try {
      parseAppDataDocument(fullAppData);
    } catch (err) {
      if (err instanceof AppDataError) throw new OrderBookError('AppDataInvalid', err.message);
      throw err;
    }
    const hash = appDataHash(fullAppData);
    if (expectedHash !== null && expectedHash.toLowerCase() !== hash) {
      throw new OrderBookError('AppDataHashMismatch', `computed appDataHash ${hash} doesn't match expected ${expectedHash.toLowerCase()}`);
    }
    return { hash, bytes };
  }

  private async checkNoConflict(hash: Hex, bytes: Buffer, db: Kysely<DB>): Promise<void> {
    const existing = await db.selectFrom('app_data').select('full_app_data').where('contract_app_data', '=', toBytes(hash)).executeTakeFirst();
    if (existing && !Buffer.from(existing.full_app_data).equals(bytes)) {
      throw new OrderBookError('AppDataMismatch', `a different document is already stored for ${hash}`);
    }
  }

  /** The stored document for a hash, `{}` for the zero hash, or null. */
  async get(hash: Hex): Promise<string | null> {
    const h = hash.toLowerCase() as Hex;
    if (h === ZERO_APP_DATA) return EMPTY_APP_DATA_JSON;
    const row = await this.db.selectFrom('app_data').select('full_app_data').where('contract_app_data', '=', toBytes(h)).executeTakeFirst();
    if (row) return Buffer.from(row.full_app_data).toString('utf8');
    if (h === appDataHash(EMPTY_APP_DATA_JSON)) return EMPTY_APP_DATA_JSON;
    return null;
  }
}
