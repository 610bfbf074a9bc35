import { domainToASCII } from 'node:url';
import type * as Tldts from 'tldts';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';

// The public suffix list (about 200 kB of source) is needed only when a domain is added or checked.
const tldts = loadOnFirstUse<typeof Tldts>('tldts');

export type ParsedDomainName = { ok: true; name: string; apex: string; subdomain: string | null } | { ok: false; reason: string };

// Letters, digits and inner hyphens: what SES accepts as a sending domain. tldts itself lets
// underscores through (they are valid in some DNS names, not in a mail domain).
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A registrable domain (`example.co.uk`) or a subdomain of one (`news.example.co.uk`), decided by
 * the public suffix list: IPs, single labels, bare public suffixes and unknown TLDs are refused.
 * Unicode names are converted to their ASCII (punycode) form, which is what DNS and SES use.
 */
export function parseDomainName(input: string): ParsedDomainName {
  const trimmed = input.trim().replace(/\.$/, '').toLowerCase();
  if (!trimmed) return { ok: false, reason: 'is empty' };
  const name = domainToASCII(trimmed);
  if (!name) return { ok: false, reason: 'is not a valid domain name' };
  if (name.length > 253) return { ok: false, reason: 'is longer than 253 characters' };
  if (!name.split('.').every((label) => LABEL.test(label))) {
    return { ok: false, reason: 'may only contain letters, digits, hyphens and dots, with labels of 1 to 63 characters' };
  }
  // Private suffixes (github.io, ...) count: their customers own the names beneath them.
  const p = tldts().parse(name, { allowPrivateDomains: true });
  if (p.isIp) return { ok: false, reason: 'is an IP address, not a domain' };
  if (!p.domain || !p.publicSuffix) return { ok: false, reason: 'is not a registrable domain (a bare public suffix or a single label)' };
  if (!p.isIcann && !p.isPrivate) return { ok: false, reason: `is not under a known public suffix (".${p.publicSuffix}")` };
  // SES also needs room for the MAIL FROM subdomain (mail.<name>) and the DKIM selector name.
  if (name.length > 200) return { ok: false, reason: 'is too long to hold its DKIM and MAIL FROM records' };
  return { ok: true, name, apex: p.domain, subdomain: p.subdomain ? p.subdomain : null };
}
