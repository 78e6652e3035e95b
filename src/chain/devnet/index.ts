// The embedded devnet: anvil with the CoW Protocol contracts at their canonical addresses, tokens, Uniswap v2
// pools, dev accounts with roles, a day of market history, a market-activity bot and a faucet.
//
//   const devnet = await startDevnet({ dataDir: './.batchbook', port: 8545, blockTime: 2, activity: true });
//   devnet.describe();            // { chainId, rpcUrl, blockTime, contracts, tokens, pools, accounts }
//   await devnet.faucet({ address, token: 'USDC', amount: '1000' });
//   devnet.exited.then(({ code }) => ...);   // anvil died: stop serving
//   await devnet.stop();
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { settlementAbi } from './abis.js';
import { AnvilStartError, DEVNET_CHAIN_ID, startAnvil, type AnvilExit, type AnvilProcess } from './anvil-process.js';
import { deployDevnet, installHooksTrampoline } from './deploy.js';
import {
  DEPLOYMENT_FORMAT_VERSION,
  DEVNET_DOMAIN_SEPARATOR,
  readStoredDeployment,
  writeStoredDeployment,
  type DevnetAccount,
  type DevnetContracts,
  type DevnetDeployment,
  type DevnetPool,
  type DevnetToken,
  type StoredDeployment,
} from './deployment.js';
import { createFaucet, type FaucetRequest, type FaucetResult } from './faucet.js';
import { HISTORY_SPACING_SECONDS, replayMarketHistory } from './history.js';
import { stopOrphanedAnvil } from './orphaned-anvil.js';
import { startMarketBot, type DevnetLogger, type MarketBot } from './market-bot.js';
import { createDevnetRpc, type DevnetRpc } from './rpc.js';
import { readBatch, steppingClock } from './transactions.js';
import { DETERMINISTIC_BLOCK_SECONDS, DETERMINISTIC_GENESIS_TIMESTAMP, isDevnetTemplate, seedDevnetFromTemplate } from './template.js';

export type { AnvilExit } from './anvil-process.js';
export { DETERMINISTIC_BLOCK_SECONDS, DETERMINISTIC_GENESIS_TIMESTAMP, devnetTemplateDir, isDevnetTemplate, publishDevnetTemplate } from './template.js';
export { AnvilStartError, DEVNET_CHAIN_ID, findFreePort } from './anvil-process.js';
export type { DevnetAccount, DevnetContracts, DevnetDeployment, DevnetPool, DevnetRole, DevnetToken } from './deployment.js';
export {
  AUTHENTICATOR_ADDRESS,
  DEVNET_DOMAIN_SEPARATOR,
  HOOKS_TRAMPOLINE_ADDRESS,
  MULTICALL3_ADDRESS,
  SETTLEMENT_ADDRESS,
  VAULT_RELAYER_ADDRESS,
} from './deployment.js';
export { FAUCET_LIMITS, FaucetError, NATIVE_TOKEN_ADDRESS } from './faucet.js';
export type { FaucetErrorCode, FaucetReceipt, FaucetRequest, FaucetResult } from './faucet.js';
export type { DevnetLogger, MarketBotStats } from './market-bot.js';

export interface DevnetOptions {
  /** Directory for persistent state (`<dataDir>/devnet/`), or null for an ephemeral chain (tests). */
  dataDir: string | null;
  /** 0: a free port */
  port: number;
  /** Whole seconds between blocks (interval mining); 0 = mine each transaction at once (automine). */
  blockTime: number;
  /** Run the market-activity bot. */
  activity: boolean;
  /** Average bot swaps per minute (default 4). */
  activitySwapsPerMinute?: number;
  /** Hours of market history to replay on a fresh chain (default 24; 0 = none). */
  historyHours?: number;
  logger?: DevnetLogger;
  /** Aborting stops the devnet (or the start-up in progress). */
  signal?: AbortSignal;
  /** Seconds between anvil's state dumps (default 10): what a hard kill can lose at most. */
  stateIntervalSeconds?: number;
  /**
   * Deterministic devnet: a fixed genesis timestamp, no history, base fee 0 (fixed gas prices), blocks mined only by
   * transactions and explicit mining, each DETERMINISTIC_BLOCK_SECONDS after the previous one (no wall clock).
   */
  deterministic?: boolean;
  /** A prepared template (template.ts) a fresh chain is copied from instead of deployed and replayed. */
  template?: string | null;
}

export interface DevnetDescription {
  chainId: number;
  rpcUrl: string;
  blockTime: number;
  contracts: DevnetContracts;
  tokens: DevnetToken[];
  pools: DevnetPool[];
  accounts: DevnetAccount[];
  /** fork mode only: the chain forked and the block the fork starts from (its hash is the upstream's) */
  fork?: { chainId: number; block: number };
}

export interface DevnetStartupTimings {
  anvilMs: number;
  deployMs: number | null;
  historyMs: number | null;
  historyBlocks: number;
  historySwaps: number;
  totalMs: number;
}

export interface Devnet {
  /** DEVNET_CHAIN_ID; in fork mode the upstream's chain id */
  readonly chainId: number;
  /** fork mode: the forked chain and block (null: the devnet) */
  readonly fork: { chainId: number; block: number; blockHash: Hex } | null;
  readonly rpcUrl: string;
  readonly blockTime: number;
  /** True if the chain was (re)built in this start: anything indexed from an earlier chain is stale. */
  readonly fresh: boolean;
  /** Hash of block 0: the chain's identity. */
  readonly genesisHash: Hex;
  readonly deployment: DevnetDeployment;
  readonly anvilPid: number;
  readonly timings: DevnetStartupTimings;
  describe(): DevnetDescription;
  faucet(request: FaucetRequest): Promise<FaucetResult>;
  /** Resolves when anvil exits — after stop(), or unexpectedly (then: stop serving). */
  readonly exited: Promise<AnvilExit>;
  /** Stops the bot and anvil (which writes its state). Idempotent. */
  stop(): Promise<void>;
  marketBotStats(): { swaps: number; errors: number; lastError: string | null } | null;
}

const silentLogger: DevnetLogger = { info: () => {}, warn: () => {}, error: () => {} };
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

class StartupAborted extends Error {
  constructor() {
    super('devnet start-up aborted');
    this.name = 'AbortError';
  }
}

export async function startDevnet(options: DevnetOptions): Promise<Devnet> {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new RangeError(`devnet port must be an integer in 0..65535 (0: a free port), got ${options.port}`);
  }
  if (!Number.isInteger(options.blockTime) || options.blockTime < 0) {
    throw new RangeError(`devnet block time must be a whole number of seconds >= 0, got ${options.blockTime}`);
  }
  if (options.historyHours !== undefined && !(options.historyHours >= 0 && options.historyHours <= 24 * 30)) {
    throw new RangeError(`devnet history must be 0..720 hours, got ${options.historyHours}`);
  }
  const log = options.logger ?? silentLogger;
  const started = performance.now();
  const historyHours = options.historyHours ?? 24;
  const devnetDir = options.dataDir ? join(options.dataDir, 'devnet') : null;
  const statePath = devnetDir ? join(devnetDir, 'state.json') : null;
  const deploymentPath = devnetDir ? join(devnetDir, 'deployment.json') : null;
  // outside devnetDir (which a fresh start deletes): the anvil a `kill -9`ed node left running is stopped first
  const pidFile = options.dataDir ? join(options.dataDir, 'anvil.pid') : null;
  const stateInterval = options.stateIntervalSeconds ?? 10;
  const checkAbort = (): void => {
    if (options.signal?.aborted) throw new StartupAborted();
  };
  const deterministic = options.deterministic ?? false;
  const anvilArgs = deterministic ? ['--base-fee', '0'] : undefined;

  let anvil: AnvilProcess | null = null;
  let fresh = true;
  /** copied from the template: a restored chain, yet a new one (what was indexed from an earlier chain is stale) */
  let seeded = false;
  let stored: StoredDeployment | null = null;
  const timings: DevnetStartupTimings = { anvilMs: 0, deployMs: null, historyMs: null, historyBlocks: 0, historySwaps: 0, totalMs: 0 };

  try {
    // ---- the anvil a `kill -9`ed node left running: stopped before the saved chain is read, since it writes its
    //      state on the way out (a node killed before the first state interval has no state file until then)
    if (pidFile) {
      const orphan = await stopOrphanedAnvil(pidFile);
      if (orphan !== null) log.warn(`devnet: stopped the anvil (pid ${orphan}) that a killed node left running (it saves its chain on the way out)`);
    }
    // ---- a fresh chain from the prepared template: copied (and moved to the present), then resumed as saved ---
    if (devnetDir && statePath && options.template && !existsSync(statePath) && isDevnetTemplate(options.template)) {
      rmSync(devnetDir, { recursive: true, force: true });
      const t = performance.now();
      if (seedDevnetFromTemplate(options.template, devnetDir, deterministic ? {} : { now: Math.floor(Date.now() / 1000) })) {
        log.info(`devnet: fresh chain copied from the prepared template in ${seconds(performance.now() - t)}`);
        seeded = true;
      } else {
        log.warn(`devnet: the prepared template ${options.template} cannot be used; deploying a fresh chain`);
        rmSync(devnetDir, { recursive: true, force: true });
      }
    }
    // ---- resume a stored chain if it is intact --------------------------------------------------------------
    if (devnetDir && statePath && deploymentPath) {
      const record = readStoredDeployment(deploymentPath);
      if (record && existsSync(statePath)) {
        log.info('devnet: starting anvil (restoring the saved chain)');
        const t = performance.now();
        try {
          anvil = await startAnvil({
            port: options.port,
            pidFile,
            statePath,
            stateIntervalSeconds: stateInterval,
            genesisTimestamp: record.genesisTimestamp,
            extraArgs: anvilArgs,
          });
          timings.anvilMs = performance.now() - t;
          const problem = await checkStoredChain(createDevnetRpc(anvil.rpcUrl), record);
          if (problem === null) {
            stored = record;
            fresh = false;
            // --timestamp (needed for an identical block 0) also rewinds anvil's clock: set it back to now before
            // any block is mined (a deterministic chain keeps its own clock: DETERMINISTIC_BLOCK_SECONDS a block)
            const latest = await createDevnetRpc(anvil.rpcUrl).request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
            const now = Math.max(Math.floor(Date.now() / 1000), Number(BigInt(latest.timestamp)) + 1);
            if (!deterministic) await createDevnetRpc(anvil.rpcUrl).request('evm_setTime', [now]);
          } else {
            log.warn(`devnet: the saved chain does not match its deployment record (${problem}); starting a fresh chain`);
            await anvil.stop();
            anvil = null;
          }
        } catch (err) {
          if (err instanceof AnvilStartError && err.reason !== 'exited' && err.reason !== 'timeout') throw err;
          log.warn(`devnet: could not restore the saved chain (${(err as Error).message}); starting a fresh chain`);
          await anvil?.stop();
          anvil = null;
        }
      } else if (existsSync(devnetDir) && (record || existsSync(statePath))) {
        log.warn('devnet: the saved chain is incomplete (state or deployment record missing); starting a fresh chain');
      }
    }
    checkAbort();

    // ---- or build a fresh one --------------------------------------------------------------------------------
    if (fresh) {
      if (devnetDir) {
        rmSync(devnetDir, { recursive: true, force: true });
        mkdirSync(devnetDir, { recursive: true });
      }
      const historySeconds = deterministic ? 0 : Math.round((historyHours * 3600) / HISTORY_SPACING_SECONDS) * HISTORY_SPACING_SECONDS;
      const genesis = deterministic ? DETERMINISTIC_GENESIS_TIMESTAMP : Math.floor(Date.now() / 1000) - historySeconds - HISTORY_SPACING_SECONDS;
      log.info('devnet: starting anvil');
      let t = performance.now();
      anvil = await startAnvil({
        port: options.port,
        pidFile,
        statePath,
        stateIntervalSeconds: stateInterval,
        genesisTimestamp: genesis,
        extraArgs: anvilArgs,
      });
      timings.anvilMs = performance.now() - t;
      checkAbort();

      const rpc = createDevnetRpc(anvil.rpcUrl);
      t = performance.now();
      const deployed = await deployDevnet(rpc, steppingClock(genesis + 12, 12));
      timings.deployMs = performance.now() - t;
      log.info(`devnet: deployed contracts in ${seconds(timings.deployMs)} (${deployed.blocks} blocks)`);
      checkAbort();

      if (historySeconds > 0) {
        t = performance.now();
        const history = await replayMarketHistory(rpc, deployed.deployment, deployed.pools, {
          hours: historySeconds / 3600,
          endTimestamp: Math.floor(Date.now() / 1000),
        });
        timings.historyMs = performance.now() - t;
        timings.historyBlocks = history.blocks;
        timings.historySwaps = history.swaps;
        log.info(
          `devnet: replayed ${formatHours(historySeconds / 3600)} of market history (${history.blocks} blocks, ${history.swaps} swaps) in ${seconds(timings.historyMs)}`,
        );
        checkAbort();
      }
      // Blocks from now on carry wall-clock timestamps (a deterministic chain's: DETERMINISTIC_BLOCK_SECONDS apart).
      if (!deterministic) await rpc.request('evm_setTime', [Math.floor(Date.now() / 1000)]);

      const block0 = await rpc.request<{ hash: Hex }>('eth_getBlockByNumber', ['0x0', false]);
      stored = {
        formatVersion: DEPLOYMENT_FORMAT_VERSION,
        chainId: DEVNET_CHAIN_ID,
        genesisHash: block0.hash,
        genesisTimestamp: genesis,
        createdAt: new Date().toISOString(),
        deployment: deployed.deployment,
      };
      if (deploymentPath) writeStoredDeployment(deploymentPath, stored);
    }

    // ---- mining, bot, faucet ---------------------------------------------------------------------------------
    const live = anvil!;
    const record = stored!;
    const rpc = createDevnetRpc(live.rpcUrl);
    // every start: a chain saved before the trampoline existed gets it as well
    record.deployment.contracts.hooksTrampoline = await installHooksTrampoline(rpc);
    if (deterministic) {
      // a block only for a transaction (or explicit mining), each a fixed step after the previous one
      await rpc.request('evm_setAutomine', [true]);
      await rpc.request('anvil_setBlockTimestampInterval', [DETERMINISTIC_BLOCK_SECONDS]);
    } else if (options.blockTime > 0) await rpc.request('evm_setIntervalMining', [options.blockTime]);
    else await rpc.request('evm_setAutomine', [true]);

    const botController = new AbortController();
    let bot: MarketBot | null = null;
    if (options.activity) {
      bot = startMarketBot({
        rpcUrl: live.rpcUrl,
        deployment: record.deployment,
        signal: botController.signal,
        logger: log,
        swapsPerMinute: options.activitySwapsPerMinute,
      });
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
      if (!stopping) {
        log.error(
          `devnet: the devnet (anvil) exited with code ${exit.code}${exit.signal ? ` (signal ${exit.signal})` : ''}${live.outputTail() ? `: ${live.outputTail()}` : ''}`,
        );
      }
    });

    timings.totalMs = performance.now() - started;
    const height = BigInt(await rpc.request<Hex>('eth_blockNumber'));
    log.info(
      `devnet: ready on ${live.rpcUrl} (chain ${DEVNET_CHAIN_ID}, block ${height}, ${fresh ? 'fresh chain' : 'restored chain'}) in ${seconds(timings.totalMs)}`,
    );

    const faucet = createFaucet({ rpc, deployment: record.deployment });
    return {
      chainId: DEVNET_CHAIN_ID,
      fork: null,
      rpcUrl: live.rpcUrl,
      blockTime: deterministic ? 0 : options.blockTime,
      fresh: fresh || seeded,
      genesisHash: record.genesisHash,
      deployment: record.deployment,
      anvilPid: live.pid,
      timings,
      describe: () => ({
        chainId: DEVNET_CHAIN_ID,
        rpcUrl: live.rpcUrl,
        blockTime: deterministic ? 0 : options.blockTime,
        contracts: { ...record.deployment.contracts },
        tokens: record.deployment.tokens.map((t) => ({ ...t })),
        pools: record.deployment.pools.map((p) => ({ ...p })),
        accounts: record.deployment.accounts.map((a) => ({ ...a })),
      }),
      faucet,
      exited: live.exited,
      stop,
      marketBotStats: () => bot?.stats() ?? null,
    };
  } catch (err) {
    await anvil?.stop().catch(() => undefined);
    throw err;
  }
}

/** Null if the running chain is the one the record describes, else what differs. */
async function checkStoredChain(rpc: DevnetRpc, record: StoredDeployment): Promise<string | null> {
  const [chainId, block0, code] = await rpc.batch<unknown>([
    { method: 'eth_chainId' },
    { method: 'eth_getBlockByNumber', params: ['0x0', false] },
    { method: 'eth_getCode', params: [record.deployment.contracts.settlement, 'latest'] },
  ]);
  if (Number(chainId) !== DEVNET_CHAIN_ID) return `chain id ${Number(chainId)}`;
  const hash = (block0 as { hash?: Hex } | null)?.hash;
  if (hash !== record.genesisHash) return `block 0 hash ${hash ?? 'missing'}, recorded ${record.genesisHash}`;
  if (typeof code !== 'string' || code.length <= 2) return 'no settlement contract code';
  const [separator] = (await readBatch(rpc, [
    { to: record.deployment.contracts.settlement, abi: settlementAbi, functionName: 'domainSeparator' },
  ])) as [Hex];
  if (separator !== DEVNET_DOMAIN_SEPARATOR) return `settlement domain separator ${separator}`;
  return null;
}

function formatHours(hours: number): string {
  return Number.isInteger(hours) ? `${hours} h` : `${Math.round(hours * 60)} min`;
}
