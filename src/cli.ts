#!/usr/bin/env node
/**
 * The `batchbook` command (`npx batchbook`): starts the exchange exactly as `npm start` does (same variables,
 * state in ./.batchbook of the current directory; Ctrl-C stops it and its anvil).
 * `batchbook prepare` makes the prepared chain and database that fresh starts copy (startBatchbook makes them
 * itself when they are missing; run it once ahead, e.g. in CI, to keep that out of the first test).
 */
const [command] = process.argv.slice(2);
if (command === 'prepare') {
  const { prepareTemplatesCommand } = await import('./kit/templates.js');
  await prepareTemplatesCommand();
  // done: nothing of it runs any more (a holder's IPC channel would otherwise keep the process)
  process.exit(0);
} else if (command === undefined || command === 'start') {
  await import('./main.js');
} else {
  process.stderr.write(`usage: batchbook [start | prepare]\n  start    run the exchange (the default; configured by environment variables, see .env.example)\n  prepare  make the prepared devnet and database templates that fresh starts copy\n`);
  process.exit(2);
}
