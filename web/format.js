// Number and text formatting of the dashboard (pure functions).

/** Atoms (decimal string) → whole units with at most 6 decimals, e.g. formatUnits('1500000', 6) === '1.5'. */
export function formatUnits(atoms, decimals) {
  if (atoms == null || atoms === '') return '';
  if (decimals == null) return String(atoms);
  const value = BigInt(atoms);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  const shown = Math.min(6, decimals);
  const fraction = ((abs % scale) * 10n ** BigInt(shown)) / scale;
  const fractionText = shown > 0 ? fraction.toString().padStart(shown, '0').replace(/0+$/, '') : '';
  const wholeText = whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${wholeText}${fractionText ? `.${fractionText}` : ''}`;
}

export function shortHex(hex, keep = 6) {
  return hex.length <= 2 * keep + 4 ? hex : `${hex.slice(0, keep + 2)}…${hex.slice(-keep + 2)}`;
}

export function tokenLabel(tokens, address) {
  if (!address) return '?';
  return tokens[address.toLowerCase()]?.symbol ?? shortHex(address);
}

export function usd(value) {
  if (value == null) return '—';
  return `$${value.toLocaleString('en-US', { maximumFractionDigits: value < 10 ? 4 : 0 })}`;
}

export function when(value) {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
