/**
 * CLI entry: `npm start`. Loads the configuration (env + optional .env), starts everything and logs where it
 * is (JSON lines, or readable lines on a terminal: log/process-logger.ts); Ctrl-C / SIGTERM stop it cleanly:
 * stop accepting, drain requests, stop loops and the devnet, close the DB.
 *
 * Started by `startBatchbook` (src/kit/), the node has an IPC channel to the process that holds it: it reports
 * where it listens over that channel once it is ready, and stops by itself when the channel closes (the holder
 * exited or was killed), so no node or anvil outlives its test run.
 */
import { loadConfigOrExit } from './config/config.js';
import { startApp } from './app.js';
import { redactingStream } from './infra/secret-redaction.js';
import { createProcessLogger } from './log/process-logger.js';
import { isTemporaryDataDirMessage, type NodeReadyMessage } from './kit/node-messages.js';
import { rmSync } from 'node:fs';

/** What a node started by `startBatchbook` sends its holder once it serves (src/kit/node-messages.ts). */
function reportReady(app: Awaited<ReturnType<typeof startApp>>): void {
  const message: NodeReadyMessage = { type: 'batchbook:ready', url: app.urls.base, rpcUrl: app.urls.devnetRpc, anvilPid: app.devnet?.anvilPid ?? null };
  process.send?.(message);
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  // held by another process (startBatchbook): its end of the channel closing means it is gone, stop with it
  let onHolderGone: () => void = () => process.exit(1);
  let temporaryDataDir = false;
  if (process.send) {
    process.on('message', (message) => (temporaryDataDir ||= isTemporaryDataDirMessage(message)));
    process.once('disconnect', () => {
      // nobody is left to remove the holder's temporary data dir: the node does, on its way out
      if (temporaryDataDir) process.once('exit', () => rmSync(config.dataDir, { recursive: true, force: true }));
      onHolderGone();
    });
  }
  // RPC URLs carry API keys: every log line passes through the redaction (viem puts URLs into its errors)
  // (except this node's own addresses, printed in the banner once it listens)
  const ownOrigins: string[] = [];
  const logger = createProcessLogger(config.logLevel, process.stdout, (destination) => redactingStream(destination, () => ownOrigins));
  const started = Date.now();
  logger.info(`batchbook starting (data dir ${config.dataDir})`);
  // a stop asked for during start-up ends the process at once: its exit handlers kill the anvil started so far
  const stopDuringStartUp = (signal: string) => {
    logger.warn(`${signal} during start-up: exiting`);
    process.exit(1);
  };
  process.on('SIGINT', stopDuringStartUp);
  process.on('SIGTERM', stopDuringStartUp);

  let app: Awaited<ReturnType<typeof startApp>>;
  try {
    app = await startApp(config, logger);
  } catch (err) {
    logger.fatal({ err }, `start-up failed: ${(err as Error).message}`);
    process.exit(1);
  }

  ownOrigins.push(new URL(app.urls.base).origin, ...(app.urls.devnetRpc ? [new URL(app.urls.devnetRpc).origin] : []));
  const lines = [
    `batchbook is up in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ...Object.entries(app.urls.orderBook).map(([name, url]) => `  order book (${name}): ${url}`),
    ...(app.urls.devnetRpc ? [`  devnet JSON-RPC:      ${app.urls.devnetRpc} (chain ${app.devnet?.chainId ?? 31337}${app.devnet?.fork ? `, a fork at block ${app.devnet.fork.block}` : ''}; contracts, tokens, accounts: ${app.urls.base}/devnet)`] : []),
    `  auxiliary API:        ${app.urls.base}/{chainId}/...`,
    `  API docs:             ${app.urls.docs}`,
    `  health / readiness:   ${app.urls.health} , ${app.urls.ready}`,
  ];
  for (const line of lines) logger.info(line);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: shutting down`);
    const hard = setTimeout(() => {
      logger.error('shutdown took longer than 8 s, exiting');
      process.exit(1);
    }, 8000);
    hard.unref();
    await app.close();
    logger.info('stopped');
    process.exit(0);
  };
  void app.fatal.then((reason) => {
    logger.fatal(reason);
    void app.close().finally(() => process.exit(1));
  });
  process.off('SIGINT', stopDuringStartUp);
  process.off('SIGTERM', stopDuringStartUp);
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  if (process.send) {
    onHolderGone = () => void stop('holder gone');
    if (process.connected) reportReady(app);
    else onHolderGone();
  }
}

void main();
