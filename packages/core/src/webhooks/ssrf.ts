import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Server-side request forgery guard for webhook URLs: a team must not make our worker call
// addresses inside our network (metadata services, databases, admin ports).

/**
 * True only for globally routable unicast addresses. ipaddr.js names every special range
 * (private, loopback, linkLocal, carrierGradeNat, multicast, unspecified, uniqueLocal, 6to4,
 * NAT64, documentation...); anything other than plain `unicast` is refused. IPv4-mapped IPv6
 * (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'unicast';
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
 * Checks a webhook URL when it is saved: an address literal or a name that resolves to a
 * non-public address is refused. A name that does not resolve (yet) is accepted: every delivery
 * checks again at connection time, so it can never reach a private address later either.
 */
export async function checkWebhookTarget(
  rawUrl: string,
  opts: { allowPrivate: boolean; resolveHost?: ResolveHost },
): Promise<TargetCheck> {
  if (opts.allowPrivate) return { ok: true };
  const host = hostOf(new URL(rawUrl));
  if (isIP(host)) return isPublicAddress(host) ? { ok: true } : { ok: false, reason: `${host} is not a public address` };
  let addresses: string[];
  try {
    addresses = await (opts.resolveHost ?? systemResolveHost)(host);
  } catch {
    return { ok: true };
  }
  const bad = addresses.find((a) => !isPublicAddress(a));
  return bad ? { ok: false, reason: `${host} resolves to ${bad}, which is not a public address` } : { ok: true };
}

export class WebhookTargetRefusedError extends Error {
  readonly code = 'WEBHOOK_TARGET_REFUSED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses non-public answers. The connection uses exactly the
 * address checked here, so a name that re-binds to 127.0.0.1 between checks cannot slip through.
 * Address literals never reach a lookup: check them with `checkWebhookTarget` first.
 */
export function publicOnlyLookup(resolveHost: ResolveHost = systemResolveHost) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveHost(hostname).then(
      (all) => {
        const bad = all.find((a) => !isPublicAddress(a));
        if (bad) return callback(new WebhookTargetRefusedError(`${hostname} resolves to ${bad}, which is not a public address`), '');
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => isIP(a) === options.family) : all;
        if (wanted.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        if (options.all) return callback(null, wanted.map((address) => ({ address, family: isIP(address) })));
        callback(null, wanted[0], isIP(wanted[0]));
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
