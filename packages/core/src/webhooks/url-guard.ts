import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ServiceError } from '../errors/index.js';

/**
 * Which receivers the operator lets webhooks reach besides public unicast addresses: every address
 * (`allowPrivate`), or the hosts and CIDR ranges listed in `allowedHosts` (`'localhost'`,
 * `'127.0.0.1/32'`, `'10.0.0.0/8'`, `'fd00::/8'`).
 */
export type WebhookAddressPolicy = { allowPrivate: boolean; allowedHosts: readonly string[] };

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The policy's CIDRs and host names, parsed once; an entry that is neither throws here (operator input). */
export function compileAddressPolicy(policy: WebhookAddressPolicy) {
  const cidrs: Cidr[] = [];
  const hosts = new Set<string>();
  for (const entry of policy.allowedHosts) {
    const value = entry.trim().toLowerCase();
    if (value.includes('/')) {
      try {
        cidrs.push(ipaddr.parseCIDR(value));
      } catch {
        throw new Error(`webhooks: allowed host ${JSON.stringify(entry)} is not a valid CIDR range.`);
      }
    } else if (ipaddr.isValid(value)) {
      const address = ipaddr.parse(value);
      cidrs.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else {
      hosts.add(value);
    }
  }

  /** Null when the operator allows `address`; otherwise the name of its range, for the refusal. */
  const refusedRange = (address: string): string | null => {
    if (policy.allowPrivate) return null;
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      parsed = ipaddr.parse(address);
    } catch {
      return 'unparseable';
    }
    // IPv4-compatible (::/96, deprecated by RFC 4291): `::7f00:1` is `::127.0.0.1`, and ipaddr.js
    // calls it unicast (its `process` spots only the dotted spelling). None is called, whatever IPv4
    // it carries; `::` and `::1` (unspecified, loopback) are in the range too.
    if (parsed.kind() === 'ipv6' && parsed.toByteArray().slice(0, 12).every((byte) => byte === 0)) {
      if (cidrs.some(([range, bits]) => range.kind() === 'ipv6' && parsed.match(range, bits))) return null;
      const own = parsed.range();
      return own === 'unicast' ? 'ipv4Compatible' : own;
    }
    // An IPv4-mapped address (::ffff:0:0/96) is judged as the IPv4 one it carries.
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    const judged = parsed;
    if (cidrs.some(([range, bits]) => range.kind() === judged.kind() && judged.match(range, bits))) return null;
    // Only public unicast: loopback, private, link-local, unique-local, CGNAT, multicast,
    // reserved and the translation ranges (6to4, Teredo, NAT64, SIIT) that can carry a private
    // IPv4 are refused whatever they carry.
    const range = judged.range();
    return range === 'unicast' ? null : range;
  };

  const isAllowedHost = (hostname: string) => policy.allowPrivate || hosts.has(hostname.toLowerCase());
  return { refusedRange, isAllowedHost };
}

export type CompiledAddressPolicy = ReturnType<typeof compileAddressPolicy>;

/** Strips the brackets of an IPv6 literal host (`[::1]`). */
const bare = (hostname: string) => (hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname);

/**
 * Checks a receiver URL when an endpoint is created or changed: http(s) only, no credentials in
 * it, and every address its host resolves to allowed. A refusal is 422 with a sentence.
 */
export async function checkWebhookUrl(value: string, policy: CompiledAddressPolicy): Promise<string> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ServiceError('invalid_request', 'Invalid url: it is not an absolute URL.', { status: 422 });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ServiceError('invalid_request', `Invalid url: webhooks are sent over http or https only, not ${url.protocol.replace(/:$/, '')}.`, { status: 422 });
  }
  if (url.username || url.password) throw new ServiceError('invalid_request', 'Invalid url: it may not carry a user name or password.', { status: 422 });
  const hostname = bare(url.hostname);
  if (policy.isAllowedHost(hostname)) return url.toString();
  let addresses: string[];
  if (isIP(hostname)) {
    addresses = [hostname];
  } else {
    try {
      addresses = (await dns.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      throw new ServiceError('invalid_request', `Invalid url: its host ${hostname} does not resolve.`, { status: 422 });
    }
  }
  for (const address of addresses) {
    const range = policy.refusedRange(address);
    if (range) {
      throw new ServiceError(
        'invalid_request',
        `Invalid url: its host ${hostname} resolves to ${address} (${range}); webhooks may only call public addresses unless the operator allows this one.`,
        { status: 422 },
      );
    }
  }
  return url.toString();
}

/** Thrown (inside the connection) when a host resolves to a refused address at delivery time. */
export class RefusedAddressError extends Error {
  override readonly name = 'RefusedAddressError';
}

/**
 * A `lookup` for `http.request` that refuses, at connection time, an address the policy does
 * not allow: a host that resolved to a public address when the endpoint was saved and to a
 * private one now (DNS rebinding) is never connected to.
 */
export function guardedLookup(policy: CompiledAddressPolicy, hostname: string): LookupFunction {
  const allowedHost = policy.isAllowedHost(bare(hostname));
  return (host, options, callback) => {
    dnsLookup(host, { ...(options as LookupAllOptions), all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return (callback as (error: Error | null, addresses: LookupAddress[]) => void)(error, []);
      if (!allowedHost) {
        for (const entry of addresses) {
          const range = policy.refusedRange(entry.address);
          if (range) return (callback as (error: Error | null, addresses: LookupAddress[]) => void)(new RefusedAddressError(`${host} resolves to ${entry.address} (${range}), which webhooks may not call.`), []);
        }
      }
      if ((options as LookupAllOptions).all) return (callback as (error: Error | null, addresses: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      return (callback as unknown as (error: Error | null, address: string, family: number) => void)(null, first.address, first.family);
    });
  };
}
