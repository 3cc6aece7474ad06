import { isIP } from 'node:net';
import { domainMatches } from '../permissions/rules';

/**
 * The sandbox's network allow-list: which hosts a sandboxed command may reach through Keel's
 * proxy. Patterns are Claude Code's `sandbox.network.allowedDomains` / `deniedDomains`: a host
 * (`github.com`), its subdomains (`*.npmjs.org`, not the bare domain), or `*` (every name).
 * Names are compared as the WebFetch rules compare them (`domainMatches`: case and a trailing dot
 * do not matter). An IP address and `localhost` (and `*.localhost`) are reached only when listed
 * exactly: no wildcard, `*` included, covers them, so allowing names never opens the host's
 * loopback or a private address by accident. Denied wins over allowed.
 */
export type HostVerdict = { allowed: true; host: string } | { allowed: false; host: string; reason: string };

/**
 * A host as a client names it (`Example.COM.`, `[::1]`, `2130706433`), normalised the way WHATWG
 * URL parsing (and so fetch, curl's URL handling) does: lower case, no trailing dot, IPv4 in
 * dotted form, IPv6 without brackets. Null when it is no valid host.
 */
export function normalizeHost(raw: string): string | null {
  const trimmed = raw.trim();
  if (trimmed === '' || /[\s/?#@\\]/.test(trimmed)) return null;
  const bracketed = isIP(trimmed) === 6 ? `[${trimmed}]` : trimmed;
  try {
    const host = new URL(`http://${bracketed}/`).hostname;
    return host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase() || null;
  } catch {
    return null;
  }
}

/** An IP literal, `localhost` or a name under `.localhost`: only an exact entry reaches it. */
export function isLocalOrAddress(host: string): boolean {
  return isIP(host) !== 0 || host === 'localhost' || host.endsWith('.localhost');
}

/**
 * Checks one pattern of the settings. Returns the normalised pattern, or why it is not one
 * (a URL, a port, a path: the list holds hosts only).
 */
export function checkDomainPattern(raw: unknown): { ok: true; pattern: string } | { ok: false; problem: string } {
  if (typeof raw !== 'string') return { ok: false, problem: `${JSON.stringify(raw)} is not a string` };
  const text = raw.trim();
  if (text === '*') return { ok: true, pattern: '*' };
  const wildcard = text.startsWith('*.');
  const body = wildcard ? text.slice(2) : text;
  const address = isIP(body.replace(/^\[|\]$/g, '')) !== 0;
  const host = body.includes('*') || (!address && body.includes(':')) ? null : normalizeHost(body);
  if (!host || (wildcard && address)) {
    return { ok: false, problem: `"${raw}" is not a host name, "*.name" or an IP address (write github.com, not https://github.com/ or github.com:443)` };
  }
  return { ok: true, pattern: wildcard ? `*.${host}` : host };
}

function matches(pattern: string, host: string): boolean {
  if (isLocalOrAddress(host)) return pattern === host;
  return domainMatches(pattern, host);
}

/**
 * The decision for one host against normalised patterns (see `checkDomainPattern`). Never throws;
 * a host that does not parse is refused.
 */
export function decideHost(rawHost: string, allowed: readonly string[], denied: readonly string[]): HostVerdict {
  const host = normalizeHost(rawHost);
  if (!host) return { allowed: false, host: rawHost, reason: `"${rawHost}" is not a valid host name` };
  const deniedBy = denied.find((p) => matches(p, host));
  if (deniedBy) return { allowed: false, host, reason: `${host} is denied by sandbox.network.deniedDomains ("${deniedBy}")` };
  if (allowed.some((p) => matches(p, host))) return { allowed: true, host };
  const why = isLocalOrAddress(host) ? `${host} is a local name or an IP address, reached only when listed exactly` : `${host} is not in sandbox.network.allowedDomains`;
  return { allowed: false, host, reason: why };
}
