#!/usr/bin/env node
// `prepack` (run by `npm pack` / `npm publish`): the package ships compiled JavaScript with its TypeScript
// declarations, so dist/ is built afresh with tsc (type-checked, declarations on; esbuild, which `npm start` may
// have used, writes none).
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './build-fingerprint.mjs';
import { build } from './build.mjs';

rmSync(join(root, 'dist'), { recursive: true, force: true });
try {
  await build({ compiler: 'tsc' });
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/cli.js', 'dist/main.js']) {
  if (!existsSync(join(root, file))) {
    process.stderr.write(`prepack: ${file} was not built\n`);
    process.exit(1);
  }
}
