/**
 * The one codec of the Solver Engine API, shared by the driver side (auctions out, solutions in) and the engine
 * side (auctions in, solutions out), in process and over HTTP: JSON text or parsed JSON is checked against the
 * schemas (`schemas.ts`) and decoded (amounts → bigint); decoded values encode back to exactly the same JSON.
 * Anything malformed throws `CodecError` naming the first offending field (the HTTP layer answers 400).
 *
 * @example
 *   const auction = decodeAuction(await request.text());   // CodecError on "12abc"
 *   const body = encodeSolveResponse({ solutions });         // plain JSON object, amounts as strings
 */
import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import {
  Auction,
  Notification,
  SolveResponse,
  type SolverAuction,
  type SolverSolveResponse,
  type WireAuction,
  type WireNotification,
} from './schemas.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));

export class CodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodecError';
  }
}

interface Codec<D, E> {
  decode(input: unknown): D;
  encode(value: D): E;
}

function codec<D, E>(name: string, schema: TSchema): Codec<D, E> {
  let compiled: TypeCheck<TSchema> | null = null;
  const check = () => (compiled ??= TypeCompiler.Compile(schema));
  const firstError = (value: unknown): string => {
    const e = check().Errors(value).First();
    return e ? `${name}${e.path.replace(/\//g, '.') || ''}: ${e.message}` : `${name}: invalid`;
  };
  return {
    decode(input) {
      let value = input;
      if (typeof input === 'string' || input instanceof Uint8Array) {
        try {
          value = JSON.parse(typeof input === 'string' ? input : new TextDecoder().decode(input));
        } catch (err) {
          throw new CodecError(`${name}: malformed JSON (${(err as Error).message})`);
        }
      }
      if (!check().Check(value)) throw new CodecError(firstError(value));
      try {
        return check().Decode(value) as D;
      } catch (err) {
        throw new CodecError(`${name}: ${(err as Error).message}`);
      }
    },
    encode(value) {
      try {
        return check().Encode(value) as E;
      } catch (err) {
        throw new CodecError(`${name} (encoding): ${(err as Error).message}`);
      }
    },
  };
}

const auctionCodec = codec<SolverAuction, WireAuction>('auction', Auction);
const solveResponseCodec = codec<SolverSolveResponse, unknown>('solutions', SolveResponse);
const notificationCodec = codec<WireNotification, unknown>('notification', Notification);

/**
 * What the schema cannot say: every order's signed amounts (`fullSellAmount`, or `sellAmount` without it, and
 * `fullBuyAmount`) are positive — engines divide by them.
 */
function checkSignedAmounts(auction: SolverAuction): SolverAuction {
  auction.orders.forEach((o, i) => {
    if ((o.fullSellAmount ?? o.sellAmount) === 0n) throw new CodecError(`auction.orders.${i}.${o.fullSellAmount === undefined ? 'sellAmount' : 'fullSellAmount'}: the signed sell amount must be positive`);
    if (o.fullBuyAmount === 0n) throw new CodecError(`auction.orders.${i}.fullBuyAmount: the signed buy amount must be positive`);
  });
  return auction;
}

/** A `POST /solve` body (JSON text, bytes or parsed JSON) → the decoded auction; CodecError when malformed. */
export const decodeAuction = (input: unknown): SolverAuction => checkSignedAmounts(auctionCodec.decode(input));
/** The decoded auction → the JSON value sent as the `POST /solve` body. */
export const encodeAuction = (auction: SolverAuction): WireAuction => auctionCodec.encode(auction);
/** A `/solve` answer → decoded solutions; CodecError when malformed. */
export const decodeSolveResponse = (input: unknown): SolverSolveResponse => solveResponseCodec.decode(input);
export const encodeSolveResponse = (response: SolverSolveResponse): unknown => solveResponseCodec.encode(response);
export const decodeNotification = (input: unknown): WireNotification => notificationCodec.decode(input);
export const encodeNotification = (n: WireNotification): unknown => notificationCodec.encode(n);
