#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's test runner (through tsx), beside a type check.
// Usage: npm test [-- <path filter> ...]   e.g. `npm test -- src/protocol`
// Time limits, so a hang fails instead of blocking the run: each test and hook that sets no timeout of its own gets
// TEST_TIMEOUT_MS (default 300 s, above the 180 s start-up waits of the node fixtures; scripts/test-limits.mjs),
// and each file TEST_FILE_TIMEOUT_MS (default 30 min: a file whose process stays up after its tests, e.g. on a
// leaked handle, is stopped and reported).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';

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

// the longest files start first, so the run does not end on one long file left alone: each file's duration in
// the last run is kept in node_modules/.cache (test-durations.mjs records them); a file never timed yet counts as
// long when it starts a node, a devnet or a process, else as short
const durationsFile = join('node_modules', '.cache', 'batchbook', 'test-durations.json');
let durations = {};
try { durations = JSON.parse(readFileSync(durationsFile, 'utf8')); } catch { /* first run */ }
const estimate = (f) => durations[f] ?? (/startTestApp\(|startBatchbook\(|startTestDevnet\(|real-chain|spawn\(/.test(readFileSync(f, 'utf8')) ? 20_000 : 2_000);
const expected = new Map(files.map((f) => [f, estimate(f)]));
files.sort((a, b) => expected.get(b) - expected.get(a));
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

/** a child process's exit status (its output kept when `collect`, else shown as it comes) */
function run(command, args, options, collect = false) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: collect ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    if (collect) {
      child.stdout.on('data', (d) => { output += d; });
      child.stderr.on('data', (d) => { output += d; });
    }
    child.on('error', (err) => resolve({ status: 1, output: `${output}${err.message}\n` }));
    child.on('close', (code, signal) => resolve({ status: code ?? (signal ? 1 : 0), output }));
  });
}

// the type check runs beside the tests (one core for half a minute, where it held up the whole run before);
// its findings are printed after the tests' report, and either failing fails the run (TYPECHECK=1 with a filter)
const typecheck = (filters.length === 0 || process.env.TYPECHECK === '1') && process.env.SKIP_TYPECHECK !== '1' ? run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json'], {}, true) : null;

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
// as many test files at once as there are cores, and one more: a file spends much of its time waiting on its
// devnet's blocks and its node's loops, so one per core leaves cores idle (TEST_CONCURRENCY overrides)
const concurrency = process.env.TEST_CONCURRENCY ?? String(Math.min(availableParallelism() + 1, 8));
const timer = new URL('./test-durations.mjs', import.meta.url).href;
const args = ['--import', 'tsx', '--import', limits, '--import', timer, '--test', '--test-force-exit', `--test-timeout=${fileLimit}`, ...reporters, `--test-concurrency=${concurrency}`, ...files];
// shared by the run's test processes: each missing service is probed and reported once (test/fixtures/required-services.ts)
const runDir = mkdtempSync(join(tmpdir(), 'bb-test-run-'));
const tests = await run(process.execPath, args, { env: { ...process.env, NODE_ENV: 'test', BATCHBOOK_TEST_RUN_DIR: runDir } });
try {
  for (const line of readFileSync(join(runDir, 'durations.tsv'), 'utf8').split('\n')) {
    const [file, ms] = line.split('\t');
    if (file && Number(ms) > 0) durations[relative(process.cwd(), resolve(file))] = Number(ms);
  }
  mkdirSync(join('node_modules', '.cache', 'batchbook'), { recursive: true });
  writeFileSync(`${durationsFile}.tmp`, JSON.stringify(durations, null, 1));
  renameSync(`${durationsFile}.tmp`, durationsFile);
} catch {
  // only an ordering hint (no file finished, or a read-only node_modules)
}
rmSync(runDir, { recursive: true, force: true });
if (typecheck) {
  const tc = await typecheck;
  if (tc.status !== 0) {
    process.stderr.write(tc.output);
    console.error('type check failed');
    process.exit(tc.status);
  }
}
process.exit(tests.status);
