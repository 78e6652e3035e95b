/**
 * What an executed hook's order says about it, from the order's app-data document: the app-data hash, the
 * document's `appCode`, the hook's `dappId`, and whether the order bridges (`metadata.bridging`, with its
 * destination chain and token when given). Null where the document does not say (or is not known).
 */
import type { Kysely } from 'kysely';
import type { Hex } from 'viem';
import { toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { parseAppDataDocument, type HookType } from '../../protocol/index.js';

export interface HookRef {
  orderUid: Hex;
  hookType: HookType;
  index: number;
}

export interface HookDetails {
  appHash: Hex | null;
  appCode: string | null;
  appId: string | null;
  isBridging: boolean;
  destinationChainId: string | null;
  destinationTokenAddress: string | null;
}

const UNKNOWN: HookDetails = { appHash: null, appCode: null, appId: null, isBridging: false, destinationChainId: null, destinationTokenAddress: null };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null);

/** Details of one hook from its order's app-data document (pure). */
export function detailsFromDocument(appHash: Hex, document: string | null, ref: Pick<HookRef, 'hookType' | 'index'>): HookDetails {
  if (document === null) return { ...UNKNOWN, appHash };
  let parsed;
  try {
    parsed = parseAppDataDocument(document);
  } catch {
    return { ...UNKNOWN, appHash };
  }
  const metadata = isObject(parsed.json.metadata) ? parsed.json.metadata : {};
  const bridging = isObject(metadata.bridging) ? metadata.bridging : null;
  const hook = parsed.protocol.hooks[ref.hookType][ref.index];
  return {
    appHash,
    appCode: text(parsed.json.appCode),
    appId: hook?.dappId ?? null,
    isBridging: bridging !== null,
    destinationChainId: bridging ? text(bridging.destinationChainId) : null,
    destinationTokenAddress: bridging ? (text(bridging.destinationTokenAddress)?.toLowerCase() ?? null) : null,
  };
}

/** Details for each hook, in order (two queries: the orders' app-data hashes, then the documents). */
export async function hookDetails(db: Kysely<DB>, chainId: number, refs: HookRef[]): Promise<HookDetails[]> {
  if (refs.length === 0) return [];
  const uids = [...new Set(refs.map((r) => r.orderUid.toLowerCase()))];
  const orders = await db.selectFrom('orders').select(['uid', 'app_data']).where('chain_id', '=', chainId).where('uid', 'in', uids.map(toBytes)).execute();
  const appDataOf = new Map(orders.map((o) => [toHex(o.uid), toHex(o.app_data)]));
  const hashes = [...new Set(appDataOf.values())];
  const documents = hashes.length === 0 ? [] : await db.selectFrom('app_data').select(['contract_app_data', 'full_app_data']).where('contract_app_data', 'in', hashes.map(toBytes)).execute();
  const documentOf = new Map(documents.map((d) => [toHex(d.contract_app_data), Buffer.from(d.full_app_data).toString('utf8')]));
  return refs.map((ref) => {
    const appHash = appDataOf.get(ref.orderUid.toLowerCase() as Hex);
    return appHash ? detailsFromDocument(appHash, documentOf.get(appHash) ?? null, ref) : UNKNOWN;
  });
}
