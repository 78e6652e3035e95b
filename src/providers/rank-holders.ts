/**
 * The common tail of every holder source: largest balance first (address as tie-break, so answers are stable),
 * at most MAX_HOLDERS, and null for an empty list ("no data", so the next source is asked).
 */
import { MAX_HOLDERS, type TokenHolder } from './ports/market.js';

export function rankHolders(holders: TokenHolder[]): TokenHolder[] | null {
  const sorted = [...holders]
    .sort((a, b) => (a.balance === b.balance ? (a.address < b.address ? -1 : 1) : a.balance > b.balance ? -1 : 1))
    .slice(0, MAX_HOLDERS);
  return sorted.length > 0 ? sorted : null;
}
