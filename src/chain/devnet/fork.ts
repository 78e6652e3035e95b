// Fork mode (issue 20): the embedded anvil as a fork of a live chain (FORK_URL), with the chain's own id, contracts,
// tokens and pools, served like the devnet (GET /devnet, the faucet, dev accounts, the bot).
//
//   const fork = await startFork({ forkUrl, forkBlock: null, dataDir, port: 8545, blockTime: 2, activity: true, extraTokens: [] });
//   fork.describe();   // { chainId: 1, rpcUrl: <the fork's own>, contracts, tokens, pools, accounts, fork: { chainId, block } }
//
// First start: the upstream's chain id, head (or FORK_BLOCK) and that block's hash are read, anvil forks it, and
// fork-setup.ts prepares the fork. The record (fork.json) and anvil's state (state.json) live in DATA_DIR; a restart
// loads that state WITHOUT the upstream (everything the node needs was pinned), so it works offline and the fork
// never moves. Nothing but reads reaches the upstream: anvil's own lazy reads, and the three of fork-upstream.ts.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { AnvilStartError, startAnvil, type AnvilProcess } from './anvil-process.js';
import { accountByRole, DEPLOYMENT_FORMAT_VERSION, readStoredDeployment, writeStoredDeployment, type StoredDeployment } from './deployment.js';
import { createFaucet } from './faucet.js';
import { forkUpstream, redactForkUrl } from './fork-upstream.js';
import { setUpFork } from './fork-setup.js';
import { startMarketBot, type DevnetLogger, type MarketBot } from './market-bot.js';
import { stopOrphanedAnvil } from './orphaned-anvil.js';
import { createDevnetRpc } from './rpc.js';
import { setTokenBalance } from './token-balance-slot.js';
import { devnetTokenAbi, settlementAbi } from './abis.js';
import { readBatch } from './transactions.js';
import type { Devnet, DevnetStartupTimings } from './index.js';
import { domainSeparator } from '../../protocol/order-domain.js';

export interface ForkOptions {
  /** FORK_URL: JSON-RPC of the live chain (may carry an API key: it is never logged) */
  forkUrl: string;
  /** FORK_BLOCK; null: the upstream's head at the first start (then kept in dataDir) */
  forkBlock: number | null;
  /** FORK_TOKENS */
  extraTokens: Address[];
  /** Directory for the fork's record and state (`<dataDir>/fork/`), or null for an ephemeral fork (tests). */
  dataDir: string | null;
  port: number;
  blockTime: number;
  activity: boolean;
  activitySwapsPerMinute?: number;
  logger?: DevnetLogger;
  signal?: AbortSignal;
  stateIntervalSeconds?: number;
}

/** What a fork's record adds to the devnet's. */
interface StoredFork extends StoredDeployment {
  fork: { chainId: number; block: number; blockHash: Hex; deployedCow: boolean };
}

const silentLogger: DevnetLogger = { info: () => {}, warn: () => {}, error: () => {} };
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function readStoredFork(path: string): StoredFork | null {
  const record = readStoredDeployment(path) as StoredFork | null;
  return record && record.fork && typeof record.fork.block === 'number' && typeof record.fork.blockHash === 'string' ? record : null;
}

export async function startFork(options: ForkOptions): Promise<Devnet> {
  const log = options.logger ?? silentLogger;
  const redact = (text: string): string => redactForkUrl(text, options.forkUrl);
  const started = performance.now();
  const forkDir = options.dataDir ? join(options.dataDir, 'fork') : null;
  const statePath = forkDir ? join(forkDir, 'state.json') : null;
  const recordPath = forkDir ? join(forkDir, 'fork.json') : null;
  const pidFile = options.dataDir ? join(options.dataDir, 'anvil.pid') : null;
  const stateInterval = options.stateIntervalSeconds ?? 10;
  const timings: DevnetStartupTimings = { anvilMs: 0, deployMs: null, historyMs: null, historyBlocks: 0, historySwaps: 0, totalMs: 0 };
  if (pidFile) {
    const orphan = await stopOrphanedAnvil(pidFile);
    if (orphan !== null) log.warn(`fork: stopped the anvil (pid ${orphan}) that a killed node left running (it saves its chain on the way out)`);
  }

  let anvil: AnvilProcess | null = null;
  let record: StoredFork | null = recordPath && statePath && existsSync(statePath) ? readStoredFork(recordPath) : null;
  if (record && options.forkBlock !== null && options.forkBlock !== record.fork.block) {
    log.warn(`fork: FORK_BLOCK=${options.forkBlock} differs from the saved fork's block ${record.fork.block}; forking afresh`);
    record = null;
  }
  const restored = record !== null;
  try {
    if (record) {
      // ---- restart: the saved fork, without the upstream ------------------------------------------------------
      log.info(`fork: restoring the saved fork of chain ${record.fork.chainId} at block ${record.fork.block} (the upstream is not contacted)`);
      const t = performance.now();
      anvil = await startAnvil({ port: options.port, chainId: record.fork.chainId, pidFile, statePath, stateIntervalSeconds: stateInterval });
      timings.anvilMs = performance.now() - t;
      const rpc = createDevnetRpc(anvil.rpcUrl);
      const [chainId, height] = await rpc.batch<Hex>([{ method: 'eth_chainId' }, { method: 'eth_blockNumber' }]);
      const [separator] = (await readBatch(rpc, [{ to: record.deployment.contracts.settlement, abi: settlementAbi, functionName: 'domainSeparator' }])) as [Hex];
      if (Number(BigInt(chainId!)) !== record.fork.chainId || BigInt(height!) < BigInt(record.fork.block) || separator !== domainSeparator(record.fork.chainId, record.deployment.contracts.settlement)) {
        throw new Error(`fork: the saved fork in ${forkDir} does not match its record (chain ${Number(BigInt(chainId!))}, height ${BigInt(height!)}); delete ${forkDir} to fork afresh`);
      }
      const latest = await rpc.request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
      await rpc.request('evm_setTime', [Math.max(Math.floor(Date.now() / 1000), Number(BigInt(latest.timestamp)) + 1)]);
    } else {
      // ---- first start: fork the upstream -------------------------------------------------------------------------
      if (forkDir) {
        rmSync(forkDir, { recursive: true, force: true });
        mkdirSync(forkDir, { recursive: true });
      }
      const upstream = forkUpstream(options.forkUrl);
      const chainId = await upstream.chainId();
      const blockNumber = options.forkBlock !== null ? BigInt(options.forkBlock) : await upstream.head();
      const block = await upstream.block(blockNumber);
      if (!block) throw new Error(`fork: FORK_BLOCK=${blockNumber} is not a block of the upstream (beyond its head?)`);
      log.info(`fork: forking chain ${chainId} at block ${block.number}`);
      const t = performance.now();
      try {
        anvil = await startAnvil({
          port: options.port,
          chainId,
          pidFile,
          statePath,
          stateIntervalSeconds: stateInterval,
          readyTimeoutMs: 60_000,
          extraArgs: ['--fork-url', options.forkUrl, '--fork-block-number', String(block.number)],
        });
      } catch (err) {
        // anvil's output may quote the URL
        throw err instanceof AnvilStartError ? new AnvilStartError(err.reason, redact(err.message)) : new Error(redact((err as Error).message));
      }
      timings.anvilMs = performance.now() - t;
      const rpc = createDevnetRpc(anvil.rpcUrl);
      const forked = await rpc.request<{ hash: Hex }>('eth_getBlockByNumber', [`0x${block.number.toString(16)}`, false]);
      if (forked.hash !== block.hash) throw new Error(`fork: the fork's block ${block.number} has hash ${forked.hash}, the upstream's ${block.hash}`);
      const s = performance.now();
      const setup = await setUpFork(rpc, { chainId, extraTokens: options.extraTokens, log });
      timings.deployMs = performance.now() - s;
      if (setup.deployedCow) log.warn(`fork: chain ${chainId} has no CoW Protocol contracts at the canonical addresses; deployed them on the fork as the devnet does`);
      record = {
        formatVersion: DEPLOYMENT_FORMAT_VERSION,
        chainId,
        genesisHash: block.hash,
        genesisTimestamp: Number(block.timestamp),
        createdAt: new Date().toISOString(),
        deployment: setup.deployment,
        fork: { chainId, block: Number(block.number), blockHash: block.hash, deployedCow: setup.deployedCow },
      };
      // anvil writes its state every stateInterval seconds and on exit; a record without a state is ignored
      if (recordPath) writeStoredDeployment(recordPath, record);
    }
  } catch (err) {
    await anvil?.stop().catch(() => undefined);
    throw err;
  }

  const live = anvil;
  const stored = record;
  const rpc = createDevnetRpc(live.rpcUrl);
  if (options.blockTime > 0) await rpc.request('evm_setIntervalMining', [options.blockTime]);
  else await rpc.request('evm_setAutomine', [true]);

  const botController = new AbortController();
  let bot: MarketBot | null = null;
  if (options.activity && stored.deployment.pools.length > 0) {
    bot = startMarketBot({ rpcUrl: live.rpcUrl, deployment: stored.deployment, signal: botController.signal, logger: log, swapsPerMinute: options.activitySwapsPerMinute, retailOnly: true });
  }
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      botController.abort();
      await bot?.done;
      await live.stop();
    })();
    return stopping;
  };
  const onAbort = (): void => void stop();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) void stop();
  void live.exited.then((exit) => {
    botController.abort();
    options.signal?.removeEventListener('abort', onAbort);
    if (!stopping) log.error(`fork: anvil exited with code ${exit.code}${exit.signal ? ` (signal ${exit.signal})` : ''}${live.outputTail() ? `: ${redact(live.outputTail())}` : ''}`);
  });

  const deployer = accountByRole(stored.deployment, 'deployer').address;
  const faucet = createFaucet({
    rpc,
    deployment: stored.deployment,
    creditDeployer: async (token, amount) => {
      const [held] = (await readBatch(rpc, [{ to: token.address, abi: devnetTokenAbi, functionName: 'balanceOf', args: [deployer] }])) as [bigint];
      await setTokenBalance(rpc, token.address, deployer, held + amount);
    },
  });
  timings.totalMs = performance.now() - started;
  const height = BigInt(await rpc.request<Hex>('eth_blockNumber'));
  log.info(`fork: ready on ${live.rpcUrl} (chain ${stored.fork.chainId}, forked at block ${stored.fork.block}, now block ${height}, ${restored ? 'restored' : 'fresh fork'}) in ${seconds(timings.totalMs)}`);
  const fork = { chainId: stored.fork.chainId, block: stored.fork.block, blockHash: stored.fork.blockHash };
  const blockTime = options.blockTime;
  return {
    chainId: stored.fork.chainId,
    fork,
    rpcUrl: live.rpcUrl,
    blockTime,
    fresh: !restored,
    // the chain's identity for the database: the fork block (block 0 of a reloaded fork is anvil's own)
    genesisHash: stored.fork.blockHash,
    deployment: stored.deployment,
    anvilPid: live.pid,
    timings,
    describe: () => ({
      chainId: stored.fork.chainId,
      rpcUrl: live.rpcUrl,
      blockTime,
      contracts: { ...stored.deployment.contracts },
      tokens: stored.deployment.tokens.map((t) => ({ ...t })),
      pools: stored.deployment.pools.map((p) => ({ ...p })),
      accounts: stored.deployment.accounts.map((a) => ({ ...a })),
      fork: { chainId: fork.chainId, block: fork.block },
    }),
    faucet,
    exited: live.exited,
    stop,
    marketBotStats: () => bot?.stats() ?? null,
  };
}
