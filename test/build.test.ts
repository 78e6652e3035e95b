/**
 * `npm start` runs dist/ only when it was built from the current sources: the fingerprint covers every source
 * file and the build configuration, and changes with any of them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error plain JavaScript build script without type declarations
import { buildFingerprint, distIsCurrent, BUILD_STAMP } from '../scripts/build-fingerprint.mjs';

describe('build fingerprint', () => {
  it('marks dist/ current only for the sources it was built from', () => {
    const base = mkdtempSync(join(tmpdir(), 'bb-build-')) + '/';
    try {
      mkdirSync(join(base, 'src/chain'), { recursive: true });
      writeFileSync(join(base, 'src/main.ts'), 'export const a = 1;\n');
      writeFileSync(join(base, 'src/chain/x.json'), '{}');
      writeFileSync(join(base, 'package.json'), '{"name":"x"}');
      assert.equal(distIsCurrent(base), false, 'no dist/ yet');
      mkdirSync(join(base, 'dist'));
      writeFileSync(join(base, BUILD_STAMP), buildFingerprint(base) + '\n');
      assert.equal(distIsCurrent(base), true);

      writeFileSync(join(base, 'src/main.test.ts'), 'test');
      assert.equal(distIsCurrent(base), true, 'a test file is not part of the build');
      writeFileSync(join(base, 'src/chain/x.json'), '{"changed":true}');
      assert.equal(distIsCurrent(base), false, 'an asset changed');
      writeFileSync(join(base, BUILD_STAMP), buildFingerprint(base) + '\n');
      writeFileSync(join(base, 'src/chain/new.ts'), 'export {};\n');
      assert.equal(distIsCurrent(base), false, 'a new source file');
      writeFileSync(join(base, BUILD_STAMP), buildFingerprint(base) + '\n');
      writeFileSync(join(base, 'package.json'), '{"name":"y"}');
      assert.equal(distIsCurrent(base), false, 'the package changed');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
