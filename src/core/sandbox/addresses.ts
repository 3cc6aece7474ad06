import { BlockList, isIP } from 'node:net';

/**
 * The sandbox's rules on the addresses a host name resolves to (docs/permissions.md, "Sandbox"):
 * the proxy resolves every name itself, applies these to what it got, and connects to the address
 * it checked. Deciding on the name alone let `*` reach the host's own loopback through any name
 * that resolves there (the machine's host name, `ip6-localhost`, any /etc/hosts alias). Pure.
 */

/** Loopback, private, link-local, shared (CGNAT), benchmarking, multicast, reserved and unspecified ranges. */
const LOCAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  LOCAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  LOCAL.addSubnet(net, prefix, 'ipv6');
}

/** The 8 groups of an IPv6 address (a trailing dotted IPv4 folded in), or null. */
function groupsOf(v6: string): number[] | null {
  let text = v6.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const b = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, -dotted[1]!.length)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const all = [...h, ...Array.from({ length: fill }, () => '0'), ...t];
  if (all.length !== 8) return null;
  const groups = all.map((g) => Number.parseInt(g, 16));
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** The IPv4 address an IPv6 one carries (mapped, compatible, NAT64 64:ff9b::/96, 6to4 2002::/16), or null. */
export function embeddedIPv4(v6: string): string | null {
  const g = groupsOf(v6);
  if (!g) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && g[5] === 0xffff) return v4(g[6]!, g[7]!);
  if (zeros(6) && (g[6] !== 0 || g[7]! > 1)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  return null;
}

/**
 * True for an address of this machine or of a private network (loopback, RFC 1918, link-local,
 * unique-local, CGNAT, multicast, reserved, unspecified), an IPv4 one carried in IPv6 included;
 * also for anything that is not an IP address (nothing is reached by accident).
 */
export function isLocalAddress(address: string): boolean {
  const kind = isIP(address);
  if (kind === 4) return LOCAL.check(address, 'ipv4');
  if (kind !== 6) return true;
  const inside = embeddedIPv4(address);
  if (inside !== null) return LOCAL.check(inside, 'ipv4');
  return LOCAL.check(address.replace(/%.*$/, ''), 'ipv6');
}

export type AddressVerdict = { allowed: true; address: string; family: 4 | 6 } | { allowed: false; reason: string };

/**
 * The decision on the addresses `host` (already allowed by name, normalised) resolved to, in the
 * resolver's order: every one must pass, and the first is the one to connect to. A local or
 * private address passes only when it is listed exactly (`allowed` holds it) or the host itself
 * is (an exact name, not through `*` or `*.domain`); a denied address never passes.
 */
export function decideAddresses(host: string, addresses: readonly { address: string; family: number }[], allowed: readonly string[], denied: readonly string[]): AddressVerdict {
  if (addresses.length === 0) return { allowed: false, reason: `${host} resolves to no address` };
  const namedExactly = allowed.includes(host);
  for (const a of addresses) {
    const address = a.address.toLowerCase();
    if (denied.includes(address)) return { allowed: false, reason: `${host} resolves to ${address}, which sandbox.network.deniedDomains denies` };
    if (isLocalAddress(address) && !namedExactly && !allowed.includes(address)) {
      return {
        allowed: false,
        reason: `${host} resolves to ${address}, an address of this machine or a private network, reached only when the name or the address is listed exactly`,
      };
    }
  }
  const first = addresses[0]!;
  return { allowed: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}
