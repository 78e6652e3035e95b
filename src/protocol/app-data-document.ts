/**
 * Validation of an app-data document and extraction of the protocol-relevant `metadata` subset.
 * Unknown keys are ignored; only the fields below are type-checked.
 */
import { keccak256, stringToBytes, type Address, type Hex } from 'viem';
import { ProtocolError } from './protocol-error.js';

/** Upstream `app-data-size-limit`. */
export const MAX_APP_DATA_BYTES = 8192;

export type AppDataErrorCode = 'tooLarge' | 'invalidUtf8' | 'invalidJson' | 'notAnObject' | 'invalidField';

/** An unusable app-data document; `field` is the JSON path of the offending field, if any. */
export class AppDataError extends ProtocolError<AppDataErrorCode> {
  readonly field: string | null;

  constructor(code: AppDataErrorCode, message: string, field: string | null = null) {
    super(code, message);
    this.field = field;
  }
}

export interface AppDataHook {
  readonly target: Address;
  readonly callData: Hex;
  readonly gasLimit: bigint;
  /** the dApp that made the hook (`dappId`), null when absent */
  readonly dappId: string | null;
}

export type PartnerFee =
  | { readonly kind: 'volume'; readonly bps: number; readonly recipient: Address }
  | { readonly kind: 'surplus'; readonly bps: number; readonly maxVolumeBps: number; readonly recipient: Address }
  | { readonly kind: 'priceImprovement'; readonly bps: number; readonly maxVolumeBps: number; readonly recipient: Address };

/** The `metadata` fields the protocol acts on, with absent fields defaulted. */
export interface ProtocolAppData {
  readonly replacedOrderUid: Hex | null;
  readonly signer: Address | null;
  /** `metadata.hooks`, or the legacy `backend.hooks` when the former is absent. */
  readonly hooks: { readonly pre: readonly AppDataHook[]; readonly post: readonly AppDataHook[] };
  /** `metadata.partnerFee`, normalised to a list (a single object becomes one entry). */
  readonly partnerFees: readonly PartnerFee[];
  readonly enableFastPath: boolean;
  /** Unix seconds. */
  readonly validFrom: number | null;
}

export interface AppDataDocument {
  /** keccak256 of the exact UTF-8 bytes (the order's `appData`). */
  readonly hash: Hex;
  readonly byteLength: number;
  /** The whole parsed document. */
  readonly json: Readonly<Record<string, unknown>>;
  readonly protocol: ProtocolAppData;
}

type JsonObject = Record<string, unknown>;

const LONE_SURROGATE = /\p{Surrogate}/u;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const EVEN_HEX = /^0x(?:[0-9a-fA-F]{2})*$/;
const UID = /^0x[0-9a-fA-F]{112}$/;
const DIGITS = /^[0-9]+$/;
const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_BPS = 10_000;

/**
 * Validates an app-data document (≤ 8192 UTF-8 bytes, well-formed, a JSON object) and extracts the
 * protocol metadata. Throws `AppDataError` naming the field at fault.
 *
 * @example
 * const doc = parseAppDataDocument('{"version":"1.4.0","metadata":{"signer":"0xAb…"}}')
 * doc.protocol.signer // '0xab…' (lowercase)
 * doc.hash            // keccak256 of the text, compare with the order's appData
 */
export function parseAppDataDocument(text: string): AppDataDocument {
  if (LONE_SURROGATE.test(text)) throw new AppDataError('invalidUtf8', 'app data is not valid UTF-8 (lone surrogate)');
  const bytes = stringToBytes(text);
  if (bytes.length > MAX_APP_DATA_BYTES) {
    throw new AppDataError('tooLarge', `app data is ${bytes.length} bytes, the limit is ${MAX_APP_DATA_BYTES}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AppDataError('invalidJson', `app data is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(json)) throw new AppDataError('notAnObject', 'app data must be a JSON object');
  return { hash: keccak256(bytes), byteLength: bytes.length, json, protocol: extractProtocolAppData(json) };
}

function extractProtocolAppData(json: JsonObject): ProtocolAppData {
  const metadata = optionalObject(json, 'metadata', 'metadata') ?? {};
  const replacedOrder = optionalObject(metadata, 'replacedOrder', 'metadata.replacedOrder');
  const backend = optionalObject(json, 'backend', 'backend');
  const hooks =
    metadata.hooks !== undefined && metadata.hooks !== null
      ? parseHooks(metadata.hooks, 'metadata.hooks')
      : backend && backend.hooks !== undefined && backend.hooks !== null
        ? parseHooks(backend.hooks, 'backend.hooks')
        : { pre: [], post: [] };
  return {
    replacedOrderUid: replacedOrder ? parseUid(replacedOrder.uid, 'metadata.replacedOrder.uid') : null,
    signer: isAbsent(metadata.signer) ? null : parseAddress(metadata.signer, 'metadata.signer'),
    hooks,
    partnerFees: isAbsent(metadata.partnerFee) ? [] : parsePartnerFees(metadata.partnerFee, 'metadata.partnerFee'),
    enableFastPath: isAbsent(metadata.enableFastPath) ? false : parseBoolean(metadata.enableFastPath, 'metadata.enableFastPath'),
    validFrom: isAbsent(metadata.validFrom) ? null : parseTimestamp(metadata.validFrom, 'metadata.validFrom'),
  };
}

function parseHooks(value: unknown, path: string): ProtocolAppData['hooks'] {
  if (!isObject(value)) throw fieldError(path, 'must be an object');
  return { pre: parseHookList(value.pre, `${path}.pre`), post: parseHookList(value.post, `${path}.post`) };
}

function parseHookList(value: unknown, path: string): AppDataHook[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) throw fieldError(path, 'must be an array');
  return value.map((hook, index) => parseHook(hook, `${path}[${index}]`));
}

function parseHook(value: unknown, path: string): AppDataHook {
  if (!isObject(value)) throw fieldError(path, 'must be an object');
  const { callData, gasLimit } = value;
  if (typeof callData !== 'string' || !EVEN_HEX.test(callData)) throw fieldError(`${path}.callData`, 'must be 0x-prefixed hex bytes');
  if (typeof gasLimit !== 'string' || !DIGITS.test(gasLimit) || BigInt(gasLimit) > MAX_UINT64) {
    throw fieldError(`${path}.gasLimit`, 'must be a decimal string of a uint64');
  }
  return {
    target: parseAddress(value.target, `${path}.target`),
    callData: callData.toLowerCase() as Hex,
    gasLimit: BigInt(gasLimit),
    dappId: typeof value.dappId === 'string' ? value.dappId : null,
  };
}

function parsePartnerFees(value: unknown, path: string): PartnerFee[] {
  if (Array.isArray(value)) return value.map((fee, index) => parsePartnerFee(fee, `${path}[${index}]`));
  return [parsePartnerFee(value, path)];
}

function parsePartnerFee(value: unknown, path: string): PartnerFee {
  if (!isObject(value)) throw fieldError(path, 'must be an object');
  const kinds = ['volumeBps', 'surplusBps', 'priceImprovementBps', 'bps'].filter((key) => !isAbsent(value[key]));
  if (kinds.length !== 1) {
    throw fieldError(path, 'must have exactly one of volumeBps, surplusBps, priceImprovementBps or bps');
  }
  const recipient = parseAddress(value.recipient, `${path}.recipient`);
  const key = kinds[0]!;
  const bps = parseBps(value[key], `${path}.${key}`);
  if (key === 'volumeBps' || key === 'bps') return { kind: 'volume', bps, recipient };
  const maxVolumeBps = parseBps(value.maxVolumeBps, `${path}.maxVolumeBps`);
  return { kind: key === 'surplusBps' ? 'surplus' : 'priceImprovement', bps, maxVolumeBps, recipient };
}

function parseBps(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_BPS) {
    throw fieldError(path, `must be an integer in [0, ${MAX_BPS}]`);
  }
  return value;
}

function parseTimestamp(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw fieldError(path, 'must be an integer unix timestamp in [0, 2^32 - 1]');
  }
  return value;
}

function parseBoolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw fieldError(path, 'must be a boolean');
  return value;
}

function parseAddress(value: unknown, path: string): Address {
  if (typeof value !== 'string' || !ADDRESS.test(value)) throw fieldError(path, 'must be a 0x-prefixed 20-byte hex address');
  return value.toLowerCase() as Address;
}

function parseUid(value: unknown, path: string): Hex {
  if (typeof value !== 'string' || !UID.test(value)) throw fieldError(path, 'must be a 56-byte order UID (0x + 112 hex)');
  return value.toLowerCase() as Hex;
}

function optionalObject(parent: JsonObject, key: string, path: string): JsonObject | undefined {
  const value = parent[key];
  if (isAbsent(value)) return undefined;
  if (!isObject(value)) throw fieldError(path, 'must be an object');
  return value;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `null` is treated like a missing key, as upstream's optional fields do. */
function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function fieldError(path: string, problem: string): AppDataError {
  return new AppDataError('invalidField', `app data ${path} ${problem}`, path);
}
