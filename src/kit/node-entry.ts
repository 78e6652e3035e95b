import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The compiled node: dist/main.js beside this module, or the repository's dist/ when running from src/ (tests). */
export function nodeEntryPoint(): string {
  const here = fileURLToPath(import.meta.url);
  const entry = here.endsWith('.ts') ? fileURLToPath(new URL('../../dist/main.js', import.meta.url)) : fileURLToPath(new URL('../main.js', import.meta.url));
  if (!existsSync(entry)) throw new Error(`the compiled node ${entry} is missing (run npm run build)`);
  return entry;
}
