/**
 * App data: the JSON documents whose keccak256 an order signs as `appData`. Stored by hash over the exact
 * bytes received (never re-serialised); the zero hash stands for `{}`.
 */
import type { Kysely } from 'kysely';
import type { Hex } from 'viem';
import { appDataHash, parseAppDataDocument, EMPTY_APP_DATA_JSON, ZERO_APP_DATA, AppDataError, MAX_APP_DATA_BYTES } from '../protocol/index.js';
import { OrderBookError } from '../http/errors.js';
import { toBytes } from '../db/codec.js';
import type { DB } from '../db/schema.js';

export interface PutAppDataResult {
  hash: Hex;
  created: boolean;
}

export class AppDataService {
  constructor(private readonly db: Kysely<DB>) {}

  /** Validates and stores a document; `expectedHash` (from the path) must equal its keccak256. */
  async put(fullAppData: string, expectedHash: Hex | null): Promise<PutAppDataResult> {
    const bytes = Buffer.from(fullAppData, 'utf8');
    if (bytes.length > MAX_APP_DATA_BYTES) {
      throw new OrderBookError('PayloadTooLarge', `app data is ${bytes.length} bytes, the limit is ${MAX_APP_DATA_BYTES}`, 413);
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
    const inserted = await this.db
      .insertInto('app_data')
      .values({ contract_app_data: toBytes(hash), full_app_data: bytes })
      .onConflict((oc) => oc.column('contract_app_data').doNothing())
      .returning('contract_app_data')
      .executeTakeFirst();
    if (inserted) return { hash, created: true };
    const existing = await this.db.selectFrom('app_data').select('full_app_data').where('contract_app_data', '=', toBytes(hash)).executeTakeFirstOrThrow();
    if (!Buffer.from(existing.full_app_data).equals(bytes)) {
      throw new OrderBookError('AppDataMismatch', `a different document is already stored for ${hash}`);
    }
    return { hash, created: false };
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
