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

/** Documents known to be stored, at most this many bytes of them (the most recently used kept). */
const KNOWN_DOCUMENT_BYTES = 8 * 1024 * 1024;

export class AppDataService {
  /**
   * Documents known to be stored (committed), by hash: a hash names one document for ever and rows are never
   * deleted, so these answer `get` and `check` without a database read. Bounded by bytes, least recently used first.
   */
  private readonly known = new Map<Hex, Buffer>();
  private knownBytes = 0;

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
    if (inserted) {
      if (db === this.db) this.remember(hash, bytes); // in a transaction: not known to be stored until it commits
      return { hash, created: true };
    }
    await this.checkNoConflict(hash, bytes, db);
    return { hash, created: false };
  }

  /**
   * What `put` checks, without storing: an order's document is stored only with the accepted order. `stored`:
   * this very document is stored already (the order has nothing to store with it).
   */
  async check(fullAppData: string, expectedHash: Hex | null): Promise<{ hash: Hex; stored: boolean }> {
    const { hash, bytes } = this.validate(fullAppData, expectedHash);
    const stored = await this.checkNoConflict(hash, bytes, this.db);
    return { hash, stored };
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

  /** Throws AppDataMismatch when another document is stored under the hash; returns whether this one is. */
  private async checkNoConflict(hash: Hex, bytes: Buffer, db: Kysely<DB>): Promise<boolean> {
    const existing = this.recall(hash) ?? (await this.read(hash, db));
    if (existing && !existing.equals(bytes)) {
      throw new OrderBookError('AppDataMismatch', `a different document is already stored for ${hash}`);
    }
    return existing !== null;
  }

  /** The stored document for a hash, `{}` for the zero hash, or null. */
  async get(hash: Hex): Promise<string | null> {
    const h = hash.toLowerCase() as Hex;
    if (h === ZERO_APP_DATA) return EMPTY_APP_DATA_JSON;
    const stored = this.recall(h) ?? (await this.read(h, this.db));
    if (stored) return stored.toString('utf8');
    if (h === appDataHash(EMPTY_APP_DATA_JSON)) return EMPTY_APP_DATA_JSON;
    return null;
  }

  /** The stored bytes of a hash from the database (remembered when read outside a transaction), or null. */
  private async read(hash: Hex, db: Kysely<DB>): Promise<Buffer | null> {
    const row = await db.selectFrom('app_data').select('full_app_data').where('contract_app_data', '=', toBytes(hash)).executeTakeFirst();
    if (!row) return null;
    const bytes = Buffer.from(row.full_app_data);
    if (db === this.db) this.remember(hash, bytes);
    return bytes;
  }

  private recall(hash: Hex): Buffer | null {
    const bytes = this.known.get(hash);
    if (!bytes) return null;
    this.known.delete(hash); // most recently used last
    this.known.set(hash, bytes);
    return bytes;
  }

  private remember(hash: Hex, bytes: Buffer): void {
    if (bytes.length > KNOWN_DOCUMENT_BYTES) return;
    const previous = this.known.get(hash);
    if (previous) this.knownBytes -= previous.length;
    this.known.delete(hash);
    this.known.set(hash, bytes);
    this.knownBytes += bytes.length;
    while (this.knownBytes > KNOWN_DOCUMENT_BYTES) {
      const [oldest, oldBytes] = this.known.entries().next().value as [Hex, Buffer];
      this.known.delete(oldest);
      this.knownBytes -= oldBytes.length;
    }
  }
}
