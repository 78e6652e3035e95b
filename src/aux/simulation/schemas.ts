/**
 * Wire schemas of the simulation routes (spec §2 "Simulation transaction" / "Simulation result", §4.5) and the
 * normalisation of a validated request body into `BundleTransaction`s.
 *
 * Unknown fields on a transaction are accepted and ignored (clients written against Tenderly send extras such
 * as `network_id`); every documented field is checked. A transaction's `gas` of 0 means "not given", as in
 * Tenderly's SDK.
 */
import { Type, type Static } from '@sinclair/typebox';
import { maxUint256, type Address, type Hex } from 'viem';
import type { BundleTransaction } from './types.js';

/** Most transactions one bundle may hold. */
export const MAX_BUNDLE_TRANSACTIONS = 32;
/** Largest gas limit a transaction may ask for. */
export const MAX_TRANSACTION_GAS = 50_000_000;

const AddressSchema = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'address, checksummed or lowercase' });
const HexDataSchema = Type.String({ pattern: '^0x([0-9a-fA-F]{2})*$', description: 'hex-encoded bytes, 0x-prefixed (0x for none)' });
const DecimalSchema = Type.String({ pattern: '^[0-9]{1,78}$', description: 'non-negative integer in wei, decimal string' });
const SignedDecimal = Type.String({ pattern: '^-?[0-9]+$' });
const Word = Type.String({ pattern: '^0x[0-9a-f]{64}$', description: '32-byte word, lowercase hex' });

export const SimulationTransactionSchema = Type.Object(
  {
    from: AddressSchema,
    to: AddressSchema,
    input: HexDataSchema,
    value: Type.Optional(DecimalSchema),
    gas: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TRANSACTION_GAS, description: 'gas limit; omitted or 0: the simulator picks one' })),
    gas_price: Type.Optional(DecimalSchema),
  },
  { additionalProperties: true },
);
export type SimulationTransactionBody = Static<typeof SimulationTransactionSchema>;

export const SimulateBundleBody = Type.Array(SimulationTransactionSchema, {
  minItems: 1,
  maxItems: MAX_BUNDLE_TRANSACTIONS,
  description: `the transactions, run in order (1 to ${MAX_BUNDLE_TRANSACTIONS})`,
});

export const ChainParams = Type.Object({ chainId: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1, description: 'numeric chain id' }) });
export const RunParams = Type.Object({
  chainId: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
  id: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'simulation id (UUID)' }),
});

const BalancesDiffSchema = Type.Record(Type.String(), Type.Record(Type.String(), SignedDecimal), {
  description: 'holder → token (0xeeee…eeee = native asset) → signed change in base units; gas costs excluded; netted-out entries left out',
});
const StateDiffSchema = Type.Array(Type.Object({ address: Type.String(), key: Word, original: Word, updated: Word }), {
  description: 'storage slots whose value changed: value before the first and after the last change',
});

export const TransactionResultSchema = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  status: Type.Boolean({ description: 'true when the transaction executed and succeeded' }),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('reverted'), Type.Literal('rejected'), Type.Literal('not_executed')], {
    description: 'reverted: executed and reverted; rejected: refused before execution (e.g. insufficient funds); not_executed: an earlier transaction failed',
  }),
  gasUsed: Type.String({ pattern: '^[0-9]+$' }),
  revertReason: Type.Union([Type.String(), Type.Null()]),
  revertData: Type.Union([Type.String(), Type.Null()]),
  balancesDiff: BalancesDiffSchema,
  stateDiff: StateDiffSchema,
  providerLink: Type.Union([Type.String(), Type.Null()]),
});

export const SimulationResultSchema = Type.Object({
  status: Type.Boolean({ description: 'true when every transaction succeeded' }),
  cumulativeBalancesDiff: BalancesDiffSchema,
  stateDiff: StateDiffSchema,
  gasUsed: Type.String({ pattern: '^[0-9]+$', description: 'gas used by all executed transactions together' }),
  link: Type.String({ description: 'URL of the stored run (GET it for the request and this result)' }),
  id: Type.String(),
  chainId: Type.Integer(),
  blockNumber: Type.Union([Type.Integer(), Type.Null()], { description: 'the block whose state the bundle ran on' }),
  provider: Type.String({ description: 'simulator that ran the bundle: fork (first-party anvil fork) or tenderly' }),
  providerLink: Type.Union([Type.String(), Type.Null()], { description: "the provider's own dashboard page, when it has one" }),
  failedTransactionIndex: Type.Union([Type.Integer(), Type.Null()], { description: 'index of the first failed transaction; the ones after it are not executed' }),
  revertReason: Type.Union([Type.String(), Type.Null()], { description: 'why that transaction failed' }),
  transactions: Type.Array(TransactionResultSchema),
});
export type SimulationResultJson = Static<typeof SimulationResultSchema>;

export const StoredTransactionSchema = Type.Object({
  from: Type.String(),
  to: Type.String(),
  input: Type.String(),
  value: Type.String(),
  gas: Type.Union([Type.Integer(), Type.Null()]),
  gas_price: Type.Union([Type.String(), Type.Null()]),
});

export const StoredRunSchema = Type.Object({
  id: Type.String(),
  chainId: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  request: Type.Array(StoredTransactionSchema),
  result: SimulationResultSchema,
});
export type StoredRunJson = Static<typeof StoredRunSchema>;

export const MessageSchema = Type.Object({ message: Type.String() });

export class BundleInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BundleInputError';
  }
}

/** Checks what the schema cannot (amounts within uint256) and normalises. Throws BundleInputError naming the field. */
export function normalizeBundle(body: readonly SimulationTransactionBody[]): BundleTransaction[] {
  return body.map((tx, i) => {
    const amount = (field: 'value' | 'gas_price'): bigint | null => {
      const raw = tx[field];
      if (raw === undefined) return null;
      const v = BigInt(raw);
      if (v > maxUint256) throw new BundleInputError(`body.${i}.${field}: must not exceed 2^256 - 1`);
      return v;
    };
    return {
      from: tx.from.toLowerCase() as Address,
      to: tx.to.toLowerCase() as Address,
      input: tx.input.toLowerCase() as Hex,
      value: amount('value') ?? 0n,
      gas: tx.gas === undefined || tx.gas === 0 ? null : tx.gas,
      gasPrice: amount('gas_price'),
    };
  });
}

/** The request as stored beside the result. */
export function storedRequest(transactions: readonly BundleTransaction[]): Static<typeof StoredTransactionSchema>[] {
  return transactions.map((tx) => ({
    from: tx.from,
    to: tx.to,
    input: tx.input,
    value: tx.value.toString(10),
    gas: tx.gas,
    gas_price: tx.gasPrice === null ? null : tx.gasPrice.toString(10),
  }));
}
