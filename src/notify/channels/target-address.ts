/**
 * Which network addresses a notification may be sent to. Outbound deliveries (webhooks, web push endpoints) go to
 * hosts a user names, so without a check a subscriber could make the node call its own private network (SSRF).
 * Refused: private, loopback, link-local, unique-local, shared (CGNAT), multicast, unspecified, documentation and
 * reserved ranges, in IPv4 and IPv6, including the IPv4-mapped, NAT64 and 6to4 IPv6 forms of the IPv4 ranges.
 *
 * @example
 *   isPublicAddress('93.184.216.34');     // true
 *   isPublicAddress('::ffff:127.0.0.1');  // false
 *   await resolveTargetHost('localhost', { allowPrivate: false }); // throws TargetAddressError(... 127.0.0.1 ...)
 */
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

const IPV4_NON_PUBLIC: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const IPV6_NON_PUBLIC: Array<[string, number]> = [
  ['::', 96], // unspecified, loopback, IPv4-compatible (deprecated)
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

function buildBlockList(): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of IPV4_NON_PUBLIC) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of IPV6_NON_PUBLIC) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

/** Eight 16-bit groups of an IPv6 address (accepts a dotted IPv4 tail); null when not IPv6. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

/** The IPv4 address embedded in an IPv6 one (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16), if any. */
export function embeddedIpv4(ipv6: string): string | null {
  const groups = ipv6Groups(ipv6);
  if (groups === null) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return null;
}

/** True when the IP literal is a publicly routable unicast address (false for anything that is not an IP). */
export function isPublicAddress(address: string, blockList: BlockList = NON_PUBLIC): boolean {
  const plain = address.replace(/%.*$/, ''); // zone index of a scoped IPv6 address
  const family = isIP(plain);
  if (family === 4) return !blockList.check(plain, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIpv4(plain);
  if (v4 !== null && blockList.check(v4, 'ipv4')) return false;
  return !blockList.check(plain, 'ipv6');
}

const NON_PUBLIC = buildBlockList();

export class TargetAddressError extends Error {
  /** 'private': the host is (or resolves to) a refused address; 'unresolved': the name does not resolve (may be transient) */
  constructor(readonly kind: 'private' | 'unresolved', message: string) {
    super(message);
    this.name = 'TargetAddressError';
  }
}

/** A URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (node:dns lookup by default, i.e. what a connection would use). */
export type ResolveHost = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolveHost: ResolveHost = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves a host name (or takes an IP literal) to the addresses a delivery may connect to. Unless private
 * targets are allowed, throws TargetAddressError('private') when any address is not public: one private answer
 * among public ones is enough to refuse, since the connection may pick it.
 */
export async function resolveTargetHost(host: string, options: { allowPrivate: boolean; resolve?: ResolveHost }): Promise<ResolvedAddress[]> {
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolveHost)(host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'lookup failed';
      throw new TargetAddressError('unresolved', `${host} does not resolve (${code})`);
    }
    if (addresses.length === 0) throw new TargetAddressError('unresolved', `${host} does not resolve`);
  }
  if (options.allowPrivate) return addresses;
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) {
    // the address a name resolves to is never told: the refusal (and a subscription's last error, which is public)
    // would otherwise map the private network for whoever names the host
    const what = literal !== 0 ? `${host} is not a public address` : `${host} resolves to an address that is not public`;
    throw new TargetAddressError('private', `${what} (private targets are refused unless NOTIFY_ALLOW_PRIVATE_TARGETS=true)`);
  }
  return addresses;
}

/**
 * Whether delivery targets may be private addresses when NOTIFY_ALLOW_PRIVATE_TARGETS is unset: yes on a node
 * that serves only the embedded devnet (receivers run on the same machine), no as soon as a real chain is served.
 */
export function defaultAllowPrivateTargets(devnetOnly: boolean): boolean {
  return devnetOnly;
}

/** The configured NOTIFY_ALLOW_PRIVATE_TARGETS when set, otherwise the devnet-only default. */
export function resolveAllowPrivateTargets(configured: boolean | null, devnetOnly: boolean): boolean {
  return configured ?? defaultAllowPrivateTargets(devnetOnly);
}
