/**
 * Creating a PGlite data directory (initdb) takes seconds of CPU inside WebAssembly. Done on the main thread it
 * blocks the event loop, so everything started beside it (the devnet's deployment and history replay) waits.
 * `initPgliteDataDir` runs it in a worker thread instead; the main thread then opens the initialised directory,
 * which is fast. `preparePgliteDataDir` skips initdb altogether when a template cluster exists (made once per
 * installed PGlite version: by `npm ci`/`npm install` through the `prepare` script, or after the first
 * initdb): a fresh data directory is then a copy of it.
 *
 * @example
 *   await preparePgliteDataDir('./.batchbook/pglite'); // no-op when already initialised
 *   const pglite = new PGlite({ dataDir: './.batchbook/pglite' });
 */
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { Kysely } from 'kysely';
import type { PGlite } from '@electric-sql/pglite';
import { migrateToLatest, migrationStatements } from './migrate.js';
import { PGliteDialect } from './pglite-dialect.js';

// plain JavaScript (an eval'd worker needs no TypeScript loader); workerData: { module, dataDir }
const INIT_WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
import(workerData.module)
  .then(async ({ PGlite }) => {
    const pglite = new PGlite({ dataDir: workerData.dataDir });
    await pglite.waitReady;
    await pglite.close();
    parentPort.postMessage({ ok: true });
  })
  .catch((err) => parentPort.postMessage({ ok: false, error: String((err && err.stack) || err) }));
`;

/** true when the directory holds an initialised cluster */
export function isPgliteDataDir(dataDir: string): boolean {
  return existsSync(join(dataDir, 'PG_VERSION'));
}

export async function initPgliteDataDir(dataDir: string): Promise<void> {
  if (isPgliteDataDir(dataDir)) return;
  mkdirSync(dataDir, { recursive: true });
  const worker = new Worker(INIT_WORKER, { eval: true, workerData: { module: import.meta.resolve('@electric-sql/pglite'), dataDir } });
  try {
    const result = await new Promise<{ ok: boolean; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`PGlite initialisation worker exited with code ${code}`)));
    });
    if (!result.ok) throw new Error(`PGlite could not initialise ${dataDir}: ${result.error}`);
  } finally {
    await worker.terminate();
  }
}

/** Where the template cluster of the installed PGlite version lives (node_modules/.cache, beside the package). */
export function defaultPgliteTemplateDir(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  let dir = dirname(entry);
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  // <root>/node_modules/@electric-sql/pglite → <root>/node_modules/.cache/batchbook
  return join(dir, '..', '..', '.cache', 'batchbook', `pglite-${version}`);
}

/** The folder of every prepared template (PGlite clusters, devnets): node_modules/.cache/batchbook. */
export function templateCacheDir(): string {
  return dirname(defaultPgliteTemplateDir());
}

/** Makes the template cluster when it is missing (initdb in a worker); returns its directory. */
export async function ensurePgliteTemplate(templateDir: string = defaultPgliteTemplateDir()): Promise<string> {
  if (isPgliteDataDir(templateDir)) return templateDir;
  const building = `${templateDir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  await initPgliteDataDir(building);
  publishTemplate(building, templateDir);
  return templateDir;
}

/** Moves a freshly made cluster into place as the template (another process may have won the race: fine). */
function publishTemplate(from: string, templateDir: string): void {
  try {
    mkdirSync(dirname(templateDir), { recursive: true });
    renameSync(from, templateDir);
  } catch {
    rmSync(from, { recursive: true, force: true });
  }
}

/**
 * The migrated template of the installed PGlite version: the template cluster with every migration of this code
 * applied (named by a hash of the migrations' names and SQL: a changed migration makes a new one), made by
 * `ensureSchemaTemplate` (`batchbook prepare`, the `prepare` script); a fresh data directory copied from it has
 * nothing left to migrate.
 */
export function schemaTemplateDir(templateDir: string = defaultPgliteTemplateDir()): string {
  const hash = createHash('sha256');
  const migrations = migrationStatements();
  for (const name of Object.keys(migrations).sort()) hash.update(name).update('\0').update(migrations[name]!.join('\0')).update('\0\0');
  return `${templateDir}-schema-${hash.digest('hex').slice(0, 12)}`;
}

/**
 * Makes the migrated template when it is missing; returns its directory. The node only ever uses the `postgres`
 * database: `template0` and `template1` are dropped from it, which halves what every fresh start copies (600 of
 * its 1 200 files).
 */
export async function ensureSchemaTemplate(templateDir: string = defaultPgliteTemplateDir()): Promise<string> {
  const dir = schemaTemplateDir(templateDir);
  if (isPgliteDataDir(dir)) return dir;
  await ensurePgliteTemplate(templateDir);
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  cpSync(templateDir, building, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = new PGlite({ dataDir: building });
  try {
    await pglite.waitReady;
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
    await migrateToLatest(db);
    for (const name of ['template0', 'template1']) {
      await pglite.exec(`alter database ${name} is_template false`);
      await pglite.exec(`drop database ${name}`);
    }
    await pglite.exec('checkpoint');
  } finally {
    await pglite.close();
  }
  publishTemplate(building, dir);
  return dir;
}

/**
 * The migrated cluster as one tarball (`dumpDataDir`), for databases held in memory: loading it (`loadDataDir`)
 * takes about a sixth of what initdb and the migrations take in a new in-memory PGlite (0.4 s against 2.5 s of
 * wall time here), and the test suite opens one in dozens of its processes. Named like the migrated template
 * (a changed migration makes a new one); made by the first in-memory open that finds none.
 */
export function schemaDumpFile(templateDir: string = defaultPgliteTemplateDir()): string {
  return `${schemaTemplateDir(templateDir)}.tar`;
}

/** The migrated cluster's tarball, or null when none was made yet (or the cache cannot be read). */
export function readSchemaDump(templateDir: string = defaultPgliteTemplateDir()): Blob | null {
  try {
    return new Blob([readFileSync(schemaDumpFile(templateDir))]);
  } catch {
    return null;
  }
}

/** Removes a tarball that could not be loaded (the next in-memory open makes a new one). */
export function dropSchemaDump(templateDir: string = defaultPgliteTemplateDir()): void {
  rmSync(schemaDumpFile(templateDir), { force: true });
}

/**
 * Saves a freshly migrated in-memory cluster as the tarball the next in-memory opens load. Drops `template0` and
 * `template1` first, as the migrated template does (the node only uses `postgres`), so a database opened either
 * way looks the same. Written beside its name and renamed into place: a reader never sees half a file; a
 * read-only cache simply has none.
 */
export async function saveSchemaDump(pglite: PGlite, templateDir: string = defaultPgliteTemplateDir()): Promise<void> {
  for (const name of ['template0', 'template1']) {
    await pglite.exec(`alter database ${name} is_template false`);
    await pglite.exec(`drop database ${name}`);
  }
  const file = schemaDumpFile(templateDir);
  const staging = `${file}.${process.pid}.tmp`;
  try {
    const tarball = await pglite.dumpDataDir('none');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(staging, Buffer.from(await tarball.arrayBuffer()));
    renameSync(staging, file);
  } catch {
    rmSync(staging, { force: true });
  }
}

/**
 * Copies a cluster file by file in libuv's thread pool: the main thread stays free for what starts beside the
 * database (the devnet), where `cpSync` held it for the whole copy.
 */
async function copyCluster(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(entries.map((e) => (e.isDirectory() ? copyCluster(join(from, e.name), join(to, e.name)) : copyFile(join(from, e.name), join(to, e.name)))));
}

/**
 * An initialised, never-opened-by-us cluster in `dataDir`: left as it is when already there, else copied from
 * the migrated template or the template, else made by initdb in a worker (and kept as the template for the next
 * fresh directory).
 */
export async function preparePgliteDataDir(dataDir: string, templateDir: string | null = defaultPgliteTemplateDir()): Promise<void> {
  if (isPgliteDataDir(dataDir)) return;
  const migrated = templateDir ? schemaTemplateDir(templateDir) : null;
  if (migrated && isPgliteDataDir(migrated)) {
    // copied beside it and renamed into place: a start killed half-way leaves no cluster that looks complete
    const staging = `${dataDir}.copying-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    try {
      await copyCluster(migrated, staging);
      rmSync(dataDir, { recursive: true, force: true });
      renameSync(staging, dataDir);
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      throw err;
    }
    return;
  }
  if (templateDir && isPgliteDataDir(templateDir)) {
    mkdirSync(dataDir, { recursive: true });
    cpSync(templateDir, dataDir, { recursive: true });
    return;
  }
  await initPgliteDataDir(dataDir);
  if (!templateDir) return;
  const copy = `${templateDir}.${process.pid}.tmp`;
  try {
    rmSync(copy, { recursive: true, force: true });
    cpSync(dataDir, copy, { recursive: true });
    publishTemplate(copy, templateDir);
  } catch {
    // the template is an optimisation: a read-only node_modules simply has none
    rmSync(copy, { recursive: true, force: true });
  }
}
