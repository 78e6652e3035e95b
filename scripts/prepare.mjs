#!/usr/bin/env node
// `prepare` (run by `npm ci` / `npm install` in a clone): gets the first `npm start` ready ahead of time — builds
// dist/ when it is stale (esbuild, as `npm start` would), makes the PGlite template cluster (initdb once per
// installed PGlite version) and the prepared templates (`batchbook prepare`: the migrated database, the devnet
// with its day of history, the deterministic devnet), so a fresh data directory is a copy instead of an initdb,
// a deployment and a history replay. Never fails the install: `npm start` does the same work itself when it is missing.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distIsCurrent, root } from './build-fingerprint.mjs';

try {
  const started = Date.now();
  // installed from the tarball (no src/, dist/ shipped) there is nothing to build, only templates to make
  const installed = !existsSync(join(root, 'src'));
  if (!installed && !distIsCurrent()) await (await import('./build.mjs')).build({ compiler: 'esbuild' });
  const { ensurePgliteTemplate } = await import(pathToFileURL(join(root, 'dist', 'db', 'pglite-init.js')).href);
  const dir = await ensurePgliteTemplate();
  // `npm pack` runs `prepare` too: the tarball needs no templates (its users make their own)
  if (!['pack', 'publish'].includes(process.env.npm_command ?? '')) {
    const { prepareTemplatesCommand } = await import(pathToFileURL(join(root, 'dist', 'kit', 'templates.js')).href);
    await prepareTemplatesCommand([]);
  }
  process.stderr.write(`prepared for npm start in ${((Date.now() - started) / 1000).toFixed(1)} s (PGlite template: ${dir})\n`);
} catch (err) {
  process.stderr.write(`warning: could not prepare for npm start (${err.message}); it will do so itself\n`);
}
