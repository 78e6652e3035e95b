/**
 * `fallback([a, b, c])`: asks each source in turn and answers with the first value.
 *
 * - `null` from a source moves on to the next one;
 * - a rejection is recorded and moves on too — a provider's error never aborts the chain;
 * - when no source has a value: `null` if every source answered "no data", otherwise the chain rejects with
 *   `SourcesUnavailableError` listing the failures, so a transient outage is never reported (or cached by an
 *   outer `cached`) as "no data".
 *
 * @example
 *   const usd = fallback([cached(firstParty, 60_000, 60_000), cached(coingecko, 120_000, 1_800_000)], {
 *     onStep: (step) => step.outcome === 'error' && log.warn({ source: step.source, err: step.error }, 'price source failed'),
 *   });
 *   const answer = await usd.lookupWithSource(query); // { value, source: 'coingecko' } | null
 */
import { SourcesUnavailableError, type DataSource } from './data-source.js';

export interface FallbackStep {
  source: string;
  outcome: 'value' | 'null' | 'error';
  error?: unknown;
  ms: number;
}

export interface FallbackOptions {
  /** name of the combined source (default: the sources' names joined with ">") */
  name?: string;
  /** called after each source was asked (logging, metrics); must not throw */
  onStep?: (step: FallbackStep) => void;
}

export interface Answer<V> {
  value: V;
  /** name of the source that answered */
  source: string;
}

export interface FallbackSource<Q, V> extends DataSource<Q, V> {
  readonly sources: ReadonlyArray<DataSource<Q, V>>;
  /** like `lookup`, also saying which source answered */
  lookupWithSource(query: Q): Promise<Answer<V> | null>;
}

export function fallback<Q, V>(sources: ReadonlyArray<DataSource<Q, V>>, options: FallbackOptions = {}): FallbackSource<Q, V> {
  const list = [...sources];
  const name = options.name ?? (list.map((s) => s.name).join('>') || 'none');
  const report = (step: FallbackStep) => {
    try {
      options.onStep?.(step);
    } catch {
      // a logging hook must never change the answer
    }
  };

  async function lookupWithSource(query: Q): Promise<Answer<V> | null> {
    const failures: Array<{ source: string; error: unknown }> = [];
    for (const source of list) {
      const started = performance.now();
      let value: V | null;
      try {
        value = await source.lookup(query);
      } catch (error) {
        failures.push({ source: source.name, error });
        report({ source: source.name, outcome: 'error', error, ms: performance.now() - started });
        continue;
      }
      if (value !== null && value !== undefined) {
        report({ source: source.name, outcome: 'value', ms: performance.now() - started });
        return { value, source: source.name };
      }
      report({ source: source.name, outcome: 'null', ms: performance.now() - started });
    }
    if (failures.length > 0) throw new SourcesUnavailableError(failures);
    return null;
  }

  return {
    name,
    sources: list,
    lookupWithSource,
    async lookup(query: Q): Promise<V | null> {
      const answer = await lookupWithSource(query);
      return answer ? answer.value : null;
    },
  };
}
