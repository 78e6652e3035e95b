// What dist/ is built from, as one hash: the path and content of every file under src/ (TypeScript and the
// assets copied beside it) and the build configuration. dist/ is current when its stamp holds this hash.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const root = new URL('..', import.meta.url).pathname;
export const BUILD_STAMP = 'dist/.build-fingerprint';
/** non-TypeScript files the compiled code reads at run time, copied to the same place under dist/ */
export const RUNTIME_ASSETS = ['src/chain/devnet/artifacts'];
const CONFIG_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];

export function buildFingerprint(base = root) {
  const hash = createHash('sha256');
  const files = readdirSync(join(base, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .sort();
  for (const file of [...files, ...CONFIG_FILES.map((f) => join(base, f))]) {
    hash.update(file.slice(base.length)).update('\0');
    try {
      hash.update(readFileSync(file));
    } catch {
      hash.update('(missing)');
    }
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** true when dist/ was built from exactly the current sources */
export function distIsCurrent(base = root) {
  try {
    return readFileSync(join(base, BUILD_STAMP), 'utf8').trim() === buildFingerprint(base);
  } catch {
    return false;
  }
}
