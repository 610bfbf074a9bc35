import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Server-side request forgery guard for webhook URLs: a team must not make our worker call
// addresses inside our network (metadata services, databases, admin ports). A delivery stores
// the first 1,000 characters of the answer, so any gap here would leak internal responses.

export interface AddressPolicy {
  /** WEBHOOK_ALLOW_PRIVATE: private, loopback, CGNAT and unique-local addresses become callable. */
  allowPrivate: boolean;
}

// Cloud metadata and platform endpoints: refused even when private addresses are allowed. The
// link-local ones (169.254.169.254 for AWS, GCP, Azure, OpenStack; 169.254.170.2 for ECS) fall in
// the always-refused link-local range anyway.
const METADATA_ADDRESSES = new Set([
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer
  '192.0.0.192', // Oracle Cloud (legacy)
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS DNS over IPv6
  'fd20:ce::254', // GCP metadata over IPv6
]);

// Ranges (ipaddr.js names) callable only with WEBHOOK_ALLOW_PRIVATE; everything else that is not
// plain `unicast` (link-local, multicast, broadcast, unspecified, reserved, documentation,
// benchmarking, local-use NAT64...) is refused whatever that setting says.
const PRIVATE_RANGES = new Set(['private', 'loopback', 'carrierGradeNat', 'uniqueLocal']);

const u32ToIPv4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * The IPv4 addresses an IPv6 address stands for, which are what a connection to it reaches:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible
 * (::a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16, the relay's address) and Teredo
 * (2001::/32: server, and the client address stored inverted). Empty for any other address.
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = v6.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // :: and ::1 are the IPv6 unspecified and loopback addresses, not IPv4-compatible ones.
  const unspecifiedOrLoopback = zeros(0, 7) && p[7] <= 1;
  if (zeros(0, 5) && (p[5] === 0xffff || p[5] === 0) && !unspecifiedOrLoopback) return [u32ToIPv4(p[6], p[7])];
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return [u32ToIPv4(p[6], p[7])];
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return [u32ToIPv4(p[6], p[7])];
  if (p[0] === 0x2002) return [u32ToIPv4(p[1], p[2])];
  if (p[0] === 0x2001 && p[1] === 0) return [u32ToIPv4(p[2], p[3]), u32ToIPv4(~p[6] & 0xffff, ~p[7] & 0xffff)];
  return [];
}

function judge(addr: ipaddr.IPv4 | ipaddr.IPv6, policy: AddressPolicy): string | null {
  const text = addr.toString();
  if (METADATA_ADDRESSES.has(text)) return `${text} is a cloud metadata address`;
  const range = addr.range();
  if (range === 'unicast') return null;
  if (policy.allowPrivate && PRIVATE_RANGES.has(range)) return null;
  return `${text} is not a public address (${range})`;
}

/**
 * Why a webhook may not call `address`, or null when it may. Only globally routable unicast
 * passes (plus private and loopback ranges with `allowPrivate`); an IPv6 address that carries an
 * IPv4 address is judged by that IPv4 address too.
 */
export function refusedAddressReason(address: string, policy: AddressPolicy): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const embedded = embeddedIPv4(v6);
    // The IPv6 form itself is a transition range (not `unicast`): judge what it reaches.
    if (embedded.length) {
      for (const v4 of embedded) {
        const reason = judge(v4, policy);
        if (reason) return `${address} reaches ${reason}`;
      }
      return null;
    }
    return judge(v6, policy);
  }
  return judge(parsed, policy);
}

/** True only for globally routable unicast addresses (the policy without WEBHOOK_ALLOW_PRIVATE). */
export function isPublicAddress(address: string): boolean {
  return refusedAddressReason(address, { allowPrivate: false }) === null;
}

/** Resolves a host name to all its addresses. A port so tests can pretend DNS answers. */
export type ResolveHost = (host: string) => Promise<string[]>;

export const systemResolveHost: ResolveHost = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address)))),
  );

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export type TargetCheck = { ok: true } | { ok: false; reason: string };

/**
 * Checks a webhook URL when it is saved: an address literal or a name that resolves to a refused
 * address is refused. A name that does not resolve (yet) is accepted: every delivery checks again
 * at connection time (publicOnlyLookup), so it can never reach a refused address later either.
 */
export async function checkWebhookTarget(rawUrl: string, opts: { allowPrivate: boolean; resolveHost?: ResolveHost }): Promise<TargetCheck> {
  const host = hostOf(new URL(rawUrl));
  if (isIP(host)) {
    const reason = refusedAddressReason(host, opts);
    return reason ? { ok: false, reason } : { ok: true };
  }
  let addresses: string[];
  try {
    addresses = await (opts.resolveHost ?? systemResolveHost)(host);
  } catch {
    return { ok: true };
  }
  for (const a of addresses) {
    const reason = refusedAddressReason(a, opts);
    if (reason) return { ok: false, reason: `${host} resolves to ${a}: ${reason}` };
  }
  return { ok: true };
}

export class WebhookTargetRefusedError extends Error {
  readonly code = 'WEBHOOK_TARGET_REFUSED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses answers the policy refuses (any non-public one by
 * default; metadata and link-local even with `allowPrivate`). The connection uses exactly the
 * address checked here, so a name that re-binds to 127.0.0.1 between checks cannot slip through.
 * Address literals never reach a lookup: check them with `refusedAddressReason` first.
 */
export function publicOnlyLookup(resolveHost: ResolveHost = systemResolveHost, policy: AddressPolicy = { allowPrivate: false }) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveHost(hostname).then(
      (all) => {
        for (const a of all) {
          const reason = refusedAddressReason(a, policy);
          if (reason) return callback(new WebhookTargetRefusedError(`${hostname} resolves to ${a}: ${reason}`), '');
        }
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => isIP(a) === options.family) : all;
        if (wanted.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        if (options.all)
          return callback(
            null,
            wanted.map((address) => ({ address, family: isIP(address) })),
          );
        callback(null, wanted[0], isIP(wanted[0]));
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
