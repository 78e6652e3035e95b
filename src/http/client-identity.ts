/**
 * Who the client is: behind trusted proxies (TRUST_PROXY: a hop count or a list of proxy addresses/CIDRs) the
 * address Fastify derives from `X-Forwarded-For` (`request.ip`), else the socket's peer. Rate limits and
 * stream caps key on `clientKey`: an IPv4 address as is, an IPv6 address by its /64 (one subscriber usually
 * holds a whole /64, so keying single IPv6 addresses would let one client take 2^64 slots).
 *
 * @example
 *   clientKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64'
 *   clientKey('::ffff:10.0.0.7')       // '10.0.0.7'
 */
import { isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';

export { parseTrustProxy, type TrustProxy } from '../config/trust-proxy.js';
import type { TrustProxy } from '../config/trust-proxy.js';

/**
 * Fastify's `trustProxy` for a setting. A hop count becomes a function trusting that many hops from the socket
 * (Fastify's own number form trusts none); use it only when every request reaches the node through those
 * proxies, since a direct client could otherwise name itself in X-Forwarded-For.
 */
export function fastifyTrustProxy(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting;
}

/** The key a client is counted under: IPv4 as is (also when IPv4-mapped), IPv6 by its /64 prefix. */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).map((h) => h.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export function clientKeyOf(request: FastifyRequest): string {
  return clientKey(request.ip);
}

/** The eight 16-bit groups of an IPv6 address (lowercase hex). */
function expandIPv6(ip: string): string[] {
  let address = ip.toLowerCase().split('%')[0]!;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    address = address.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = address.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right];
}
