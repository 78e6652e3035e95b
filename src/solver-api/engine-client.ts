/**
 * The driver side of the Solver Engine API: an engine — external (`url + "/solve"`, `url + "/notify"`, as
 * production's driver calls them) or built-in (the same codec, in process) — as one of the competition's
 * `Solver`s. Each auction is encoded once (`AuctionEncoder`) and sent with its deadline; an engine that does
 * not answer by then, or fails, has no solution (and is told `timeout`). Every solution it answers is checked
 * (`checkSolution`): a refused one still competes as a filtered-out entry carrying the engine's name and why,
 * and the engine is told the notify kind once the competition is over (`notifyEngines`). Several valid
 * solutions of one engine over distinct orders compete merged into one (as production's driver merges them)
 * when together they still pass the checks, and each on its own as well (ranked below the merge by score).
 */
import type { Address } from 'viem';
import type { Auction } from '../solver/auction-types.js';
import type { RankedSolution } from '../solver/competition.js';
import type { SettlementOutcome } from '../solver/driver.js';
import { InvalidSolutionError, verifySolution, type Solution, type Solver } from '../solver/solution.js';
import { CodecError, decodeSolveResponse, encodeNotification } from './codec.js';
import type { AuctionEncoder } from './auction-encoder.js';
import type { EngineService } from './engines.js';
import type { NotifyKind, WireAuction, WireNotification } from './schemas.js';
import { checkSolution, mergeSolutions } from './solution-check.js';

export interface EngineTransport {
  /** where it is reached (for logs): a URL or `in-process` */
  readonly describe: string;
  /** an engine this node runs itself (in process or on its worker threads) */
  readonly local?: boolean;
  solve(request: { body: string; wire: WireAuction }, signal: AbortSignal): Promise<unknown>;
  notify(notification: unknown): Promise<void>;
}

export class EngineHttpError extends Error {
  constructor(
    readonly status: number,
    text: string,
  ) {
    super(`HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
    this.name = 'EngineHttpError';
  }
}

/** The most of an engine's `/solve` answer that is read (an answer as large as the largest auction we accept). */
export const MAX_ENGINE_ANSWER_BYTES = 8 * 1024 * 1024;

export class EngineAnswerTooLargeError extends Error {
  constructor(max: number) {
    super(`answer larger than ${max} bytes`);
    this.name = 'EngineAnswerTooLargeError';
  }
}

/** A response body as text, refused (and its connection dropped) once it passes `maxBytes`. */
export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new EngineAnswerTooLargeError(maxBytes);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new EngineAnswerTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An engine behind HTTP, called as production's driver calls it; its answers are read up to `maxAnswerBytes`. */
export function httpTransport(baseUrl: string, notifyTimeoutMs = 2_000, maxAnswerBytes = MAX_ENGINE_ANSWER_BYTES): EngineTransport {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    describe: base,
    async solve({ body }, signal) {
      const res = await fetch(`${base}/solve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
      const text = await readCapped(res, maxAnswerBytes);
      if (res.status !== 200) throw new EngineHttpError(res.status, text);
      return text;
    },
    async notify(notification) {
      const res = await fetch(`${base}/notify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(notification), signal: AbortSignal.timeout(notifyTimeoutMs) });
      await res.body?.cancel().catch(() => {});
    },
  };
}

/** A built-in engine in this process, through the same codec (no HTTP). */
export function localTransport(service: EngineService): EngineTransport {
  return {
    describe: 'in-process',
    local: true,
    async solve({ body }, signal) {
      signal.throwIfAborted();
      return new Promise((resolve, reject) => {
        const abort = () => reject(signal.reason);
        signal.addEventListener('abort', abort, { once: true });
        // the JSON text: a worker thread takes it as it is (no structured copy of the decoded auction)
        service.solve(body).then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
      });
    },
    async notify(notification) {
      service.notify(notification);
    },
  };
}

export interface EngineLogger {
  warn(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

function holds(solution: Solution): boolean {
  try {
    verifySolution(solution);
    return true;
  } catch (err) {
    if (err instanceof InvalidSolutionError) return false;
    throw err;
  }
}

/** Where a competing solution came from, to tell its engine how it fared. */
export interface SolutionOrigin {
  engine: EngineSolver;
  auctionId: string;
  solutionIds: number[];
  /** set when the check refused it */
  kind?: NotifyKind;
  /** a merge of several of the engine's solutions (never reported as refused) */
  merged?: boolean;
}

const ORIGIN = Symbol('solver-engine origin');
type WithOrigin = Solution & { [ORIGIN]?: SolutionOrigin };

/** The engine a competing solution came from (kept through copies such as `withOrderHooks`). */
export function originOf(solution: Solution): SolutionOrigin | null {
  return (solution as WithOrigin)[ORIGIN] ?? null;
}

function withOrigin(solution: Solution, origin: SolutionOrigin): Solution {
  return Object.assign(solution, { [ORIGIN]: origin });
}

export interface EngineSolverOptions {
  name: string;
  transport: EngineTransport;
  encoder: AuctionEncoder;
  settlement: Address;
  /** contracts interactions may not call: the settlement, the vault relayer */
  forbiddenTargets: Address[];
  logger?: EngineLogger;
  now?: () => number;
}

export class EngineSolver implements Solver {
  readonly name: string;
  /** the node's own engines only: an external engine's word never blames orders (auction-loop's failing search) */
  readonly trusted: boolean;
  /** notifications sent (the last 100; tests and diagnostics) */
  readonly sent: Array<{ auctionId: string; solutionId: number | null; kind: NotifyKind }> = [];

  constructor(private readonly options: EngineSolverOptions) {
    this.name = options.name;
    this.trusted = options.transport.local === true;
  }

  async solve(auction: Auction): Promise<Solution[]> {
    const { encoder, transport, logger } = this.options;
    const encoded = await encoder.encode(auction);
    const auctionId = String(auction.id);
    const left = encoded.deadline.getTime() - (this.options.now ?? Date.now)();
    let body: unknown;
    try {
      body = await transport.solve({ body: encoded.body, wire: encoded.wire }, AbortSignal.timeout(Math.max(1, left)));
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      if (timedOut) void this.notify(auctionId, null, 'timeout');
      throw new Error(`engine ${this.name} (${transport.describe}): ${timedOut ? `no answer within ${encoder.timeLimitMs} ms` : (err as Error).message}`);
    }
    let response;
    try {
      response = decodeSolveResponse(body);
    } catch (err) {
      if (err instanceof CodecError) throw new Error(`engine ${this.name}: malformed answer (${err.message})`);
      throw err;
    }
    const out: Solution[] = [];
    const valid: Solution[] = [];
    const ids = new Set<number>();
    const context = { auction, liquidity: encoded.liquidity, settlement: this.options.settlement, forbiddenTargets: this.options.forbiddenTargets };
    for (const wire of response.solutions) {
      const origin: SolutionOrigin = { engine: this, auctionId, solutionIds: [wire.id] };
      if (ids.has(wire.id)) {
        out.push(withOrigin(this.refused('solution id used twice'), { ...origin, kind: 'duplicatedSolutionId' }));
        continue;
      }
      ids.add(wire.id);
      const checked = checkSolution(this.name, wire, context);
      if (checked.ok) {
        valid.push(withOrigin(checked.solution, origin));
      } else {
        logger?.debug?.({ engine: this.name, auctionId, solutionId: wire.id, kind: checked.kind, reason: checked.reason }, 'solver engine: solution refused');
        out.push(withOrigin(this.refused(checked.reason), { ...origin, kind: checked.kind }));
      }
    }
    // several solutions over distinct orders compete as one, when together they still hold; the parts compete too,
    // after it: when the merge fails to simulate (two orders that cannot settle together), a part may still win
    const merged = mergeSolutions(valid);
    if (merged && holds(merged)) return [withOrigin(merged, { engine: this, auctionId, solutionIds: valid.map((s) => originOf(s)!.solutionIds[0]), merged: true }), ...valid, ...out];
    return [...valid, ...out];
  }

  private refused(reason: string): Solution {
    return { solver: this.name, trades: [], clearingPrices: new Map(), interactions: { pre: [], intra: [], post: [] }, interactionEffects: [], rejected: reason };
  }

  /** `POST /notify` (best effort: a failing engine is logged, never retried). */
  async notify(auctionId: string, solutionId: number | null, kind: NotifyKind): Promise<void> {
    this.sent.push({ auctionId, solutionId, kind });
    if (this.sent.length > 100) this.sent.shift();
    const notification: WireNotification = { auctionId, kind, ...(solutionId === null ? {} : { solutionId }) };
    await this.options.transport.notify(encodeNotification(notification)).catch((err) => this.options.logger?.warn({ engine: this.name, err: (err as Error).message }, 'solver engine: notify failed'));
  }
}

/**
 * Tells every engine how its solutions fared, once the competition is decided: refused ones their check's
 * kind, the ones the simulation refused `simulationFailed`, the winner `success`/`revert` (or `fail` when it
 * was dropped, `driverError` when it could not be sent) when its settlement is over.
 */
export async function notifyEngines(ranked: RankedSolution[], settlement: Promise<SettlementOutcome> | null): Promise<void> {
  const sends: Array<Promise<void>> = [];
  let winner = null as SolutionOrigin | null;
  for (const r of ranked) {
    const origin = originOf(r.solution);
    if (!origin) continue;
    if (r.isWinner) winner = origin;
    else if (origin.kind) for (const id of origin.solutionIds) sends.push(origin.engine.notify(origin.auctionId, id, origin.kind));
    else if (r.filteredOut && !origin.merged) for (const id of origin.solutionIds) sends.push(origin.engine.notify(origin.auctionId, id, kindOfFilter(r.reason)));
  }
  await Promise.all(sends);
  if (!winner || !settlement) return;
  const outcome = await settlement;
  const kind: NotifyKind = outcome.status === 'mined' ? 'success' : outcome.status === 'reverted' ? 'revert' : outcome.status === 'dropped' ? 'fail' : 'driverError';
  const w = winner;
  await Promise.all(w.solutionIds.map((id) => w.engine.notify(w.auctionId, id, kind)));
}

function kindOfFilter(reason: string | null): NotifyKind {
  if (reason === null || reason.startsWith('simulation') || reason.startsWith('encoding')) return 'simulationFailed';
  if (reason.includes('limit price')) return 'invalidClearingPrices';
  if (reason.includes('pay out')) return 'nonBufferableTokensUsed';
  return 'invalidExecutedAmount';
}
