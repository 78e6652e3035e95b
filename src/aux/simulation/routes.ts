/**
 * POST /{chainId}/simulation/simulateBundle (spec §4.5) and GET /{chainId}/simulation/{id} (the stored run a
 * result's `link` points to). Auxiliary API: errors are `{message}`.
 *
 * - 400: body not an array of 1..32 transactions, a malformed address / hex / amount (the message names the
 *   field), or a chain id that is not a number;
 * - 404: a chain this server does not simulate; an unknown run id;
 * - 500: the simulation failed for a server-side reason (provider credentials refused, simulator not runnable,
 *   the run could not be stored);
 * - 502: the simulation provider (the chain's RPC node, the fork, Tenderly) is unavailable, busy or timed out.
 * A reverting transaction is not an error: 200 with `status: false` and the failure's details.
 */
import type { Kysely } from 'kysely';
import { clientKeyOf } from '../../http/client-identity.js';
import { ClientQuota, DEFAULT_CLIENT_QUOTA, applyGasBudget, type ClientQuotaLimits } from './client-quota.js';
import type { DB } from '../../db/schema.js';
import { AuxError } from '../../http/errors.js';
import { MAX_BODY_LIMIT, sendJson, type HttpServer } from '../../http/server.js';
import {
  BundleInputError,
  ChainParams,
  MessageSchema,
  RunParams,
  SimulateBundleBody,
  SimulationResultSchema,
  StoredRunSchema,
  normalizeBundle,
  type SimulationTransactionBody,
} from './schemas.js';
import { SimulationService, type SimulationChain } from './simulation-service.js';
import { SimulationStore } from './simulation-store.js';
import type { BundleSimulator, SimulationLogger } from './simulator.js';
import { SimulationFailedError, SimulationUnavailableError } from './types.js';

export interface SimulationRouteContext {
  /** chain id → its fork-capable RPC node; the chains served (others answer 404) */
  chains: ReadonlyMap<number, SimulationChain>;
  simulator: BundleSimulator;
  db: Kysely<DB>;
  /**
   * Public base URL for result links, e.g. https://api.example.org (PUBLIC_URL). Null or absent: relative links
   * (`/{chainId}/simulation/{id}`), never derived from the request's Host or X-Forwarded-Host (a client could
   * make the server hand out links to any site).
   */
  publicBaseUrl?: string | (() => string | null) | null;
  options?: {
    /** per-client quotas (default 2 concurrent, 30 a minute) */
    clientQuota?: ClientQuotaLimits;
    /** total gas of one bundle (default 2^27) */
    bundleGas?: number;
    /** keep stored runs this long (default 30 days; 0 = forever) */
    retentionMs?: number;
    /** stored runs kept per client, the newest (SIMULATION_MAX_STORED_RUNS_PER_CLIENT, default 100) */
    maxRunsPerClient?: number;
    logger?: SimulationLogger;
  };
}

/** default total gas of one bundle: eight transactions at the per-transaction cap */
const DEFAULT_BUNDLE_GAS = 2 ** 27;

const GAS_NOTE =
  'Gas: without `gas_price` a transaction runs at gas price 0 (free, so senders need no ether); with it, the price is honoured. ' +
  'Balance diffs never include gas costs. The run stops at the first failing transaction; the ones after it are reported as `not_executed`.';

export function registerSimulationRoutes(server: HttpServer, ctx: SimulationRouteContext): SimulationService {
  const service = new SimulationService({
    chains: ctx.chains,
    simulator: ctx.simulator,
    store: new SimulationStore(ctx.db),
    retentionMs: ctx.options?.retentionMs,
    maxRunsPerClient: ctx.options?.maxRunsPerClient,
    logger: ctx.options?.logger,
  });
  const errors = { 400: MessageSchema, 404: MessageSchema, 429: MessageSchema, 500: MessageSchema, 502: MessageSchema };

  const baseUrl = (): string => {
    const configured = typeof ctx.publicBaseUrl === 'function' ? ctx.publicBaseUrl() : ctx.publicBaseUrl;
    return (configured ?? '').replace(/\/+$/, '');
  };
  const quota = new ClientQuota(ctx.options?.clientQuota ?? DEFAULT_CLIENT_QUOTA);
  const bundleGas = ctx.options?.bundleGas ?? DEFAULT_BUNDLE_GAS;

  const requireChain = (chainId: number) => {
    if (!service.supports(chainId)) {
      const served = [...ctx.chains.keys()].sort((a, b) => a - b).join(', ');
      throw new AuxError(404, `chain ${chainId} is not supported for simulation${served ? ` (supported: ${served})` : ''}`);
    }
  };

  server.post(
    '/:chainId/simulation/simulateBundle',
    {
      schema: {
        tags: ['auxiliary'],
        summary: 'Simulate a bundle of transactions in sequence on a private fork of the current chain state',
        description:
          'Runs the transactions in order, each from its (impersonated) sender, on a private copy of the latest block; the chain itself is never touched. ' +
          GAS_NOTE,
        params: ChainParams,
        body: SimulateBundleBody,
        response: { 200: SimulationResultSchema, ...errors },
      },
      bodyLimit: MAX_BODY_LIMIT,
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const { chainId } = req.params as { chainId: number };
      requireChain(chainId);
      let transactions;
      try {
        transactions = applyGasBudget(normalizeBundle(req.body as SimulationTransactionBody[]), bundleGas);
      } catch (err) {
        if (err instanceof BundleInputError) throw new AuxError(400, err.message);
        throw err;
      }
      const client = clientKeyOf(req);
      const slot = quota.acquire(client);
      if ('refused' in slot) {
        reply.header('retry-after', '5');
        throw new AuxError(429, slot.refused);
      }
      const base = baseUrl();
      try {
        const result = await service.simulate(chainId, transactions, (id) => `${base}/${chainId}/simulation/${id}`, client);
        return sendJson(reply, 200, result);
      } catch (err) {
        if (err instanceof SimulationUnavailableError) throw new AuxError(502, `simulation provider unavailable: ${err.message}`);
        if (err instanceof SimulationFailedError) throw new AuxError(500, `simulation failed: ${err.message}`);
        throw err;
      } finally {
        slot.release();
      }
    },
  );

  server.get(
    '/:chainId/simulation/:id',
    {
      schema: {
        tags: ['auxiliary'],
        summary: 'A stored simulation run: the request and its result',
        params: RunParams,
        response: { 200: StoredRunSchema, 400: MessageSchema, 404: MessageSchema, 500: MessageSchema },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const { chainId, id } = req.params as { chainId: number; id: string };
      requireChain(chainId);
      const run = await service.get(chainId, id);
      if (!run) throw new AuxError(404, `no simulation ${id} on chain ${chainId}`);
      return sendJson(reply, 200, run);
    },
  );

  return service;
}
