// Prepared devnets: a fresh chain copied from a template (the deployed contracts, and the market history) instead
// of deployed and replayed at every fresh start. A template is a devnet data folder (`state.json` + `deployment.json`)
// saved once; a start copies it. A template with history is moved to the present on the way: every block's
// timestamp shifts by the same amount so that its last block is "now", and the block hashes are recomputed
// (anvil derives them from the headers it loads), so the copy is a chain whose day of history ends at this start.
//
//   const dir = devnetTemplateDir(cacheDir, { historyHours: 24, deterministic: false });
//   if (!existsSync(join(dir, 'state.json'))) await buildDevnetTemplate(dir, { historyHours: 24, deterministic: false });
//   seedDevnetFromTemplate(dir, './.batchbook/devnet', { now: Math.floor(Date.now() / 1000) });
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keccak256, toRlp, type Hex } from 'viem';
import { readStoredDeployment, writeStoredDeployment, type StoredDeployment } from './deployment.js';

/** Genesis timestamp of a deterministic devnet: 2025-01-01T00:00:00Z. */
export const DETERMINISTIC_GENESIS_TIMESTAMP = 1_735_689_600;
/** Seconds between the blocks of a deterministic devnet (each mined block is this much after the previous one). */
export const DETERMINISTIC_BLOCK_SECONDS = 12;

export interface DevnetTemplateKind {
  /** hours of market history (0: the deployment only) */
  historyHours: number;
  /** the deterministic devnet (fixed genesis, no history: historyHours is ignored) */
  deterministic: boolean;
}

/** The version of the anvil binary package in use (its state format may change between versions). */
function anvilVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    return (JSON.parse(readFileSync(require.resolve('@foundry-rs/anvil/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** A hash of what builds the chain: this folder's code and artifacts, and the anvil version. */
export function devnetCodeFingerprint(codeDir: string = dirname(fileURLToPath(import.meta.url))): string {
  const hash = createHash('sha256').update(anvilVersion()).update('\0');
  const files = readdirSync(codeDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !/\.test\.|\.map$|\.d\.ts$/.test(e.name))
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();
  for (const file of files) hash.update(file.slice(codeDir.length)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Where the template of a kind lives under the cache folder. */
export function devnetTemplateDir(cacheDir: string, kind: DevnetTemplateKind, codeDir?: string): string {
  const mode = kind.deterministic ? 'deterministic' : `history-${kind.historyHours}h`;
  return join(cacheDir, `devnet-${devnetCodeFingerprint(codeDir)}-${mode}`);
}

/** true when `dir` holds a complete template */
export function isDevnetTemplate(dir: string): boolean {
  return existsSync(join(dir, 'state.json')) && readStoredDeployment(join(dir, 'deployment.json')) !== null;
}

/**
 * Publishes a devnet folder that a stopped devnet left (`state.json` + `deployment.json`) as the template `dir`.
 * Atomic: a reader sees the whole template or none; when another process published it first, that one stays.
 */
export function publishDevnetTemplate(fromDevnetDir: string, dir: string): void {
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.tmp-`);
  try {
    // the call traces of the set-up transactions are most of the file and nobody reads them: a template without
    // them loads (and is moved to the present) in a third of the time
    const state = JSON.parse(readFileSync(join(fromDevnetDir, 'state.json'), 'utf8')) as { transactions?: Array<{ info?: { traces?: unknown[] } }> };
    for (const tx of state.transactions ?? []) if (tx.info?.traces) tx.info.traces = [];
    writeFileSync(join(staging, 'state.json'), JSON.stringify(state));
    copyFileSync(join(fromDevnetDir, 'deployment.json'), join(staging, 'deployment.json'));
    renameSync(staging, dir);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    if (!isDevnetTemplate(dir)) throw err;
  }
}

interface StateBlockHeader {
  parentHash: Hex;
  sha3Uncles: Hex;
  miner: Hex;
  stateRoot: Hex;
  transactionsRoot: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  difficulty: Hex;
  number: Hex;
  gasLimit: Hex;
  gasUsed: Hex;
  timestamp: Hex;
  extraData: Hex;
  mixHash: Hex;
  nonce: Hex;
  baseFeePerGas?: Hex;
  withdrawalsRoot?: Hex;
  blobGasUsed?: Hex;
  excessBlobGas?: Hex;
  parentBeaconBlockRoot?: Hex;
  requestsHash?: Hex;
}

interface AnvilState {
  block?: { timestamp?: Hex | number };
  blocks?: Array<{ header: StateBlockHeader }>;
  transactions?: Array<{ block_hash?: Hex }>;
}

const quantity = (value: Hex): Hex => {
  const n = BigInt(value);
  if (n === 0n) return '0x';
  const digits = n.toString(16);
  return `0x${digits.length % 2 ? '0' : ''}${digits}`;
};

/** keccak256 of the RLP header, as the execution layer (and anvil) hashes a block (London → Prague fields). */
export function blockHeaderHash(h: StateBlockHeader): Hex {
  const fields: Hex[] = [h.parentHash, h.sha3Uncles, h.miner, h.stateRoot, h.transactionsRoot, h.receiptsRoot, h.logsBloom, quantity(h.difficulty), quantity(h.number), quantity(h.gasLimit), quantity(h.gasUsed), quantity(h.timestamp), h.extraData, h.mixHash, h.nonce];
  const optional: Array<[Hex | undefined, boolean]> = [
    [h.baseFeePerGas, true],
    [h.withdrawalsRoot, false],
    [h.blobGasUsed, true],
    [h.excessBlobGas, true],
    [h.parentBeaconBlockRoot, false],
    [h.requestsHash, false],
  ];
  for (const [value, isQuantity] of optional) {
    if (value === undefined) break;
    fields.push(isQuantity ? quantity(value) : value);
  }
  return keccak256(toRlp(fields));
}

/**
 * Moves every block of a saved anvil state by `shiftSeconds` and re-links the chain (each block's parentHash, each
 * transaction's block hash). Returns the new block-0 hash, or null when the state's headers do not hash the way
 * this code hashes them (a newer anvil): the caller then builds the chain afresh instead.
 */
export function shiftStateTimestamps(state: AnvilState, shiftSeconds: number): Hex | null {
  const blocks = [...(state.blocks ?? [])].sort((a, b) => Number(BigInt(a.header.number) - BigInt(b.header.number)));
  if (blocks.length === 0 || BigInt(blocks[0]!.header.number) !== 0n) return null;
  // each header hashed once as saved: the saved chain must link up under our hashing before we rewrite it
  const saved = blocks.map((b) => blockHeaderHash(b.header));
  for (let i = 1; i < blocks.length; i++) {
    if (BigInt(blocks[i]!.header.number) !== BigInt(i) || blocks[i]!.header.parentHash !== saved[i - 1]) return null;
  }
  const renamed = new Map<string, Hex>();
  let parent: Hex | null = null;
  for (const [i, block] of blocks.entries()) {
    if (parent !== null) block.header.parentHash = parent;
    block.header.timestamp = `0x${(BigInt(block.header.timestamp) + BigInt(shiftSeconds)).toString(16)}`;
    parent = blockHeaderHash(block.header);
    renamed.set(saved[i]!, parent);
  }
  for (const tx of state.transactions ?? []) {
    if (tx.block_hash && renamed.has(tx.block_hash)) tx.block_hash = renamed.get(tx.block_hash)!;
  }
  if (state.block?.timestamp !== undefined) {
    const t = BigInt(state.block.timestamp);
    state.block.timestamp = `0x${(t + BigInt(shiftSeconds)).toString(16)}`;
  }
  return blockHeaderHash(blocks[0]!.header);
}

/**
 * Makes `devnetDir` a saved devnet copied from the template `templateDir`. With `now`, the chain is moved so that its
 * last block is at `now` (its history ends at this start); without, it is copied as it is (deterministic devnets).
 * Returns false (and leaves `devnetDir` without a chain) when the template cannot be used.
 */
export function seedDevnetFromTemplate(templateDir: string, devnetDir: string, options: { now?: number } = {}): boolean {
  const record = readStoredDeployment(join(templateDir, 'deployment.json'));
  if (!record || !existsSync(join(templateDir, 'state.json'))) return false;
  mkdirSync(devnetDir, { recursive: true });
  if (options.now === undefined) {
    copyFileSync(join(templateDir, 'state.json'), join(devnetDir, 'state.json'));
    writeStoredDeployment(join(devnetDir, 'deployment.json'), record);
    return true;
  }
  const state = JSON.parse(readFileSync(join(templateDir, 'state.json'), 'utf8')) as AnvilState;
  const last = (state.blocks ?? []).reduce((max, b) => (BigInt(b.header.timestamp) > max ? BigInt(b.header.timestamp) : max), 0n);
  const shift = Math.max(0, options.now - Number(last));
  const genesisHash = shiftStateTimestamps(state, shift);
  if (genesisHash === null) return false;
  const moved: StoredDeployment = { ...record, genesisHash, genesisTimestamp: record.genesisTimestamp + shift, createdAt: new Date().toISOString() };
  writeFileSync(join(devnetDir, 'state.json'), JSON.stringify(state));
  writeStoredDeployment(join(devnetDir, 'deployment.json'), moved);
  return true;
}
