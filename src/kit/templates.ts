/**
 * Prepared templates: the chain and database a fresh node copies instead of building them (deploying the
 * contracts, replaying the market history, migrating the database). They live in node_modules/.cache/batchbook
 * and are made once per version of the code: by `npm ci` in the repository (the `prepare` script), by
 * `npx batchbook prepare`, or by the first `startBatchbook()` that needs one (the others wait for it).
 *
 * @example
 *   await prepareTemplates({ deterministic: true, env: {} }); // no-op once made
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { devnetTemplateDir, isDevnetTemplate, publishDevnetTemplate, startDevnet } from '../chain/devnet/index.js';
import { ensureSchemaTemplate, isPgliteDataDir, schemaTemplateDir, templateCacheDir } from '../db/pglite-init.js';
import { nodeEntryPoint } from './node-entry.js';

export interface TemplateKind {
  deterministic: boolean;
  historyHours: number;
}

const DEFAULT_HISTORY_HOURS = 24;

/** The devnet an instance with this configuration starts (null: none from a template, e.g. a fork or a real chain). */
export function templateKindFor(options: { deterministic: boolean; env: Record<string, string> }): TemplateKind | null {
  const { env } = options;
  if (env.FORK_URL || env.DEVNET === 'false' || Object.keys(env).some((k) => k.startsWith('RPC_URL_'))) return null;
  if (options.deterministic || env.DETERMINISTIC === 'true') return { deterministic: true, historyHours: 0 };
  const hours = env.DEVNET_HISTORY_HOURS !== undefined ? Number(env.DEVNET_HISTORY_HOURS) : DEFAULT_HISTORY_HOURS;
  return Number.isInteger(hours) && hours >= 0 ? { deterministic: false, historyHours: hours } : null;
}

/** The compiled devnet code the node runs (its templates are keyed by it). */
function nodeDevnetCodeDir(): string {
  return join(dirname(nodeEntryPoint()), 'chain', 'devnet');
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Makes the templates an instance needs when they are missing: in a child process running the node's own code
 * (`batchbook prepare`), one at a time across processes (a lock beside them), so four test files starting at once
 * build them once.
 */
export async function prepareTemplates(options: { deterministic: boolean; env: Record<string, string> }): Promise<void> {
  const kind = templateKindFor(options);
  const usesPglite = !options.env.DATABASE_URL;
  const cache = templateCacheDir();
  const ready = (): boolean => (!usesPglite || isPgliteDataDir(schemaTemplateDir())) && (kind === null || isDevnetTemplate(devnetTemplateDir(cache, kind, nodeDevnetCodeDir())));
  if (ready()) return;
  mkdirSync(cache, { recursive: true });
  const lock = join(cache, 'prepare.lock');
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      // another process builds: wait for it (or take over when it died)
      let owner = 0;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        owner = 0;
      }
      if (owner > 0 && !isRunning(owner)) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 200));
      if (ready()) return;
    }
  }
  try {
    if (ready()) return;
    const args = kind === null ? ['--database-only'] : kind.deterministic ? ['--deterministic'] : ['--history-hours', String(kind.historyHours)];
    await runPrepare(args);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function runPrepare(args: string[]): Promise<void> {
  const cli = join(dirname(nodeEntryPoint()), 'cli.js');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'prepare', ...args], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: process.env.TMPDIR ?? tmpdir() } });
    let err = '';
    child.stderr!.on('data', (d) => (err = (err + d).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`batchbook prepare failed (code ${code}): ${err.trim()}`))));
  });
}

async function buildDevnetTemplate(kind: TemplateKind): Promise<string> {
  const dir = devnetTemplateDir(templateCacheDir(), kind);
  if (isDevnetTemplate(dir)) return dir;
  const work = mkdtempSync(join(tmpdir(), 'batchbook-template-'));
  try {
    const devnet = await startDevnet({ dataDir: work, port: 0, blockTime: 0, activity: false, historyHours: kind.historyHours, deterministic: kind.deterministic });
    await devnet.stop();
    publishDevnetTemplate(join(work, 'devnet'), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
}

/**
 * `batchbook prepare [--deterministic | --history-hours N | --database-only]`: makes the migrated database template
 * and the devnet templates (default: the deterministic one and the one `npm start` uses, 24 h of history).
 */
export async function prepareTemplatesCommand(argv: string[] = process.argv.slice(3)): Promise<void> {
  // held by startBatchbook: stop with it
  if (process.send) {
    process.once('disconnect', () => process.exit(1));
    // the channel alone must not keep this process alive once the templates are made
    process.channel?.unref();
  }
  const started = Date.now();
  const kinds: TemplateKind[] = [];
  if (argv.includes('--deterministic')) kinds.push({ deterministic: true, historyHours: 0 });
  const h = argv.indexOf('--history-hours');
  if (h >= 0) {
    const hours = Number(argv[h + 1]);
    if (!Number.isInteger(hours) || hours < 0 || hours > 168) throw new Error('--history-hours: expected an integer from 0 to 168');
    kinds.push({ deterministic: false, historyHours: hours });
  }
  if (kinds.length === 0 && !argv.includes('--database-only')) kinds.push({ deterministic: true, historyHours: 0 }, { deterministic: false, historyHours: DEFAULT_HISTORY_HOURS });
  const made = [await ensureSchemaTemplate()];
  for (const kind of kinds) made.push(await buildDevnetTemplate(kind));
  process.stderr.write(`batchbook: templates ready in ${((Date.now() - started) / 1000).toFixed(1)} s:\n${made.map((d) => `  ${d}`).join('\n')}\n`);
}
