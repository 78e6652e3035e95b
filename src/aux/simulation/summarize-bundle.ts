/**
 * The wire result (spec §2 "Simulation result" plus the per-transaction details) from a simulator's outcome:
 * - `status`: every transaction succeeded;
 * - `cumulativeBalancesDiff`: the balance changes of all executed transactions added up (a failed transaction
 *   changes no balances; gas is excluded), netted-out entries left out;
 * - `stateDiff`: per storage slot the value before the bundle and after it, unchanged slots left out;
 * - `gasUsed`: gas of every executed transaction, the failed one included;
 * - `failedTransactionIndex` / `revertReason`: the first failure (the transactions after it are not executed).
 *
 * @example
 *   summarizeBundle(outcome, { id, chainId: 1, link: 'https://host/1/simulation/<id>' })
 */
import type { SimulationResultJson } from './schemas.js';
import { addBalanceChanges, balanceChangesJson, mergeStorageChanges } from './state-changes.js';
import type { BalanceChanges, BundleOutcome } from './types.js';

export function summarizeBundle(outcome: BundleOutcome, run: { id: string; chainId: number; link: string }): SimulationResultJson {
  const total: BalanceChanges = new Map();
  let gasUsed = 0n;
  for (const tx of outcome.transactions) {
    gasUsed += tx.gasUsed;
    if (tx.outcome === 'success') addBalanceChanges(total, tx.balanceChanges);
  }
  const failed = outcome.transactions.find((tx) => tx.outcome !== 'success') ?? null;
  const lastLink = [...outcome.transactions].reverse().find((tx) => tx.providerLink)?.providerLink ?? null;
  return {
    status: failed === null && outcome.transactions.length > 0,
    cumulativeBalancesDiff: balanceChangesJson(total),
    stateDiff: mergeStorageChanges(outcome.transactions.filter((tx) => tx.outcome === 'success').map((tx) => tx.storageChanges)),
    gasUsed: gasUsed.toString(10),
    link: run.link,
    id: run.id,
    chainId: run.chainId,
    blockNumber: outcome.blockNumber,
    provider: outcome.provider,
    providerLink: lastLink,
    failedTransactionIndex: failed ? failed.index : null,
    revertReason: failed ? (failed.revertReason ?? (failed.outcome === 'not_executed' ? 'not executed' : 'failed')) : null,
    transactions: outcome.transactions.map((tx) => ({
      index: tx.index,
      status: tx.outcome === 'success',
      outcome: tx.outcome,
      gasUsed: tx.gasUsed.toString(10),
      revertReason: tx.revertReason,
      revertData: tx.revertData,
      balancesDiff: balanceChangesJson(tx.balanceChanges),
      stateDiff: mergeStorageChanges([tx.storageChanges]),
      providerLink: tx.providerLink,
    })),
  };
}
