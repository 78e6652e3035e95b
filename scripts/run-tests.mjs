#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's test runner (through tsx), after a type check.
// Usage: npm test [-- <path filter> ...]   e.g. `npm test -- src/protocol`
// Time limits, so a hang fails instead of blocking the run: each test and hook that sets no timeout of its own gets
// TEST_TIMEOUT_MS (default 300 s, above the 180 s start-up waits of the node fixtures; scripts/test-limits.mjs),
// and each file TEST_FILE_TIMEOUT_MS (default 30 min: a file whose process stays up after its tests, e.g. on a
// leaked handle, is stopped and reported).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const filters = process.argv.slice(2);
const files = [];
for (const root of ['src', 'test']) {
  let entries = [];
  try { entries = readdirSync(root, { recursive: true }); } catch { continue; }
  for (const rel of entries) {
    const file = join(root, String(rel));
    if (file.endsWith('.test.ts') && (filters.length === 0 || filters.some((f) => file.includes(f)))) files.push(file);
  }
}
files.sort();
if (files.length === 0) { console.error('no test files matched'); process.exit(1); }

// node's runner silently leaves out suites declared after a top-level await that follows the file's first suite:
// refuse such a file rather than report its missing tests as passed
const lateAwaits = files.filter((f) => {
  const lines = readFileSync(f, 'utf8').split('\n');
  const first = lines.findIndex((l) => /^(describe|it|test)\(/.test(l));
  return first >= 0 && lines.slice(first + 1).some((l) => /^[^\s/*].*\bawait\b/.test(l));
});
if (lateAwaits.length > 0) {
  console.error(`a top-level await after the first describe/it (its later suites would never run): ${lateAwaits.join(', ')}`);
  process.exit(1);
}

if (filters.length === 0 && process.env.SKIP_TYPECHECK !== '1') {
  const tc = spawnSync('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json'], { stdio: 'inherit' });
  if (tc.status !== 0) { console.error('type check failed'); process.exit(tc.status ?? 1); }
}

// files that run the built node (dist/): build it once for the run, before any of them starts (scripts/build.mjs
// replaces files atomically), rather than each file racing to rebuild it
const needsDist = files.filter((f) => /scripts\/build\.mjs|fixtures\/real-chain\.js/.test(readFileSync(f, 'utf8')));
if (needsDist.length > 0) {
  const { distIsCurrent } = await import('./build-fingerprint.mjs');
  if (!distIsCurrent()) await (await import('./build.mjs')).build({ compiler: 'esbuild' });
}

const limits = new URL('./test-limits.mjs', import.meta.url).href;
const fileLimit = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 30 * 60_000);
// TEST_TAP_FILE=path also writes a TAP report there (each file's duration_ms: where the run's time goes)
const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout'];
if (process.env.TEST_TAP_FILE) reporters.push('--test-reporter=tap', `--test-reporter-destination=${process.env.TEST_TAP_FILE}`);
const args = ['--import', 'tsx', '--import', limits, '--test', '--test-force-exit', `--test-timeout=${fileLimit}`, ...reporters, `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...files];
// shared by the run's test processes: each missing service is probed and reported once (test/fixtures/required-services.ts)
const runDir = mkdtempSync(join(tmpdir(), 'bb-test-run-'));
const run = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test', BATCHBOOK_TEST_RUN_DIR: runDir } });
rmSync(runDir, { recursive: true, force: true });
process.exit(run.status ?? 1);
