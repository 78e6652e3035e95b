#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ with tsc (tsconfig.build.json: type-checked), copies the
// non-TypeScript files the runtime reads (contract artifacts), and records the fingerprint of the inputs so
// `npm start` (scripts/start.mjs) knows dist/ is current.
//
// `build({ compiler: 'esbuild' })` is what `npm start` uses when dist/ is stale: the same files, transpiled one
// by one (the code base is `isolatedModules`, so the output is equivalent) in about a second instead of tsc's
// half a minute; type errors are caught by `npm run typecheck` / `npm test`, not at start.
//
// Atomic per file: everything is compiled into a staging directory (dist/.staging-<pid>-…) and each file is then
// renamed over its place in dist/, so a node starting meanwhile (another test, `npm start`) never loads a half-written
// file; the fingerprint is removed first and written last, so an interrupted build is seen as stale.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { buildFingerprint, BUILD_STAMP, RUNTIME_ASSETS, root } from './build-fingerprint.mjs';

const require = createRequire(import.meta.url);

function sourceFiles() {
  return readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.startsWith('test-'))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

async function compileWithEsbuild(outdir) {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: sourceFiles(),
    outdir,
    outbase: join(root, 'src'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  });
}

function compileWithTsc(outdir) {
  // a full build into the staging directory (its own build info: dist/'s would make tsc skip unchanged files)
  const args = ['-p', join(root, 'tsconfig.build.json'), '--outDir', outdir, '--tsBuildInfoFile', join(outdir, '.tsbuildinfo')];
  const run = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), ...args], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`build failed: tsc exited with ${run.status ?? run.signal}`);
}

export async function build({ compiler = 'tsc' } = {}) {
  const started = Date.now();
  const fingerprint = buildFingerprint();
  const dist = join(root, 'dist');
  const staging = join(dist, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  rmSync(join(root, BUILD_STAMP), { force: true });
  try {
    if (compiler === 'esbuild') await compileWithEsbuild(staging);
    else compileWithTsc(staging);
    for (const asset of RUNTIME_ASSETS) cpSync(join(root, asset), join(staging, asset.slice('src/'.length)), { recursive: true });
    for (const entry of readdirSync(staging, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const from = join(entry.parentPath ?? entry.path, entry.name);
      const to = join(dist, relative(staging, from));
      mkdirSync(dirname(to), { recursive: true });
      renameSync(from, to);
    }
    const stamp = join(staging, 'stamp');
    writeFileSync(stamp, fingerprint + '\n');
    renameSync(stamp, join(root, BUILD_STAMP));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  process.stderr.write(`built dist/ with ${compiler} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  build().catch((err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
}
