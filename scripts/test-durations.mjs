// Preloaded into every test file's process by scripts/run-tests.mjs (`--import`): on exit, appends the file's
// wall time to the run's folder, from which the runner keeps each file's last duration to start the longest first.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BATCHBOOK_TEST_RUN_DIR;
const file = process.argv.find((a) => a.endsWith('.test.ts'));
if (dir && file) {
  process.on('exit', () => {
    try {
      appendFileSync(join(dir, 'durations.tsv'), `${file}\t${Math.round(performance.now())}\n`);
    } catch {
      // only an ordering hint
    }
  });
}
