#!/usr/bin/env node
// `npm start`: runs the compiled node (dist/main.js), building it first when dist/ is missing or was built from
// other sources (scripts/build-fingerprint.mjs). No TypeScript is compiled at run time.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distIsCurrent, root } from './build-fingerprint.mjs';

if (!distIsCurrent()) {
  process.stderr.write('dist/ is missing or out of date: building it\n');
  const { build } = await import('./build.mjs');
  try {
    await build({ compiler: 'esbuild' });
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
await import(pathToFileURL(join(root, 'dist', 'main.js')).href);
