/**
 * TRUST_PROXY: a hop count or a list of proxy addresses/CIDRs in front of the node (http/client-identity.ts
 * turns the setting into Fastify's `trustProxy` and the client's identity).
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Fastify's `trustProxy`: false (the socket peer is the client), a hop count, or the trusted proxies. */
export type TrustProxy = false | number | string[];

/** Parses TRUST_PROXY; null when the value is neither a hop count nor a list of IP addresses/CIDRs. */
export function parseTrustProxy(raw: string | null): TrustProxy | null {
  if (raw === null || raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw) === 0 ? false : Number(raw);
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (entries.length === 0) return null;
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    if (rest.length > 0 || !address) return null;
    const max = isIPv4(address) ? 32 : isIPv6(address) ? 128 : -1;
    if (max < 0) return null;
    if (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > max)) return null;
  }
  return entries;
}
