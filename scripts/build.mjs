#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ with tsc (tsconfig.build.json: type-checked), copies the
// non-TypeScript files the runtime reads (contract artifacts), and records the fingerprint of the inputs so
// `npm start` (scripts/start.mjs) knows dist/ is current.
//
// `build({ compiler: 'esbuild' })` is what `npm start` uses when dist/ is stale: the same files, transpiled one
// by one (the code base is `isolatedModules`, so the output is equivalent) in about a second instead of tsc's
// half a minute; type errors are caught by `npm run typecheck` / `npm test`, not at start.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { buildFingerprint, BUILD_STAMP, RUNTIME_ASSETS, root } from './build-fingerprint.mjs';

const require = createRequire(import.meta.url);

function sourceFiles() {
  return readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.startsWith('test-'))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

async function compileWithEsbuild() {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: sourceFiles(),
    outdir: join(root, 'dist'),
    outbase: join(root, 'src'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  });
}

function compileWithTsc() {
  const run = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`build failed: tsc exited with ${run.status ?? run.signal}`);
}

export async function build({ compiler = 'tsc' } = {}) {
  const started = Date.now();
  const fingerprint = buildFingerprint();
  rmSync(join(root, BUILD_STAMP), { force: true });
  if (compiler === 'esbuild') await compileWithEsbuild();
  else compileWithTsc();
  for (const asset of RUNTIME_ASSETS) {
    const to = join(root, 'dist', asset.slice('src/'.length));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(join(root, asset), to, { recursive: true });
  }
  writeFileSync(join(root, BUILD_STAMP), fingerprint + '\n');
  process.stderr.write(`built dist/ with ${compiler} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  build().catch((err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
}
