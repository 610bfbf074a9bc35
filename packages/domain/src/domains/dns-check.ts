import { DnsTemporaryError, type DnsLookup } from './dns-lookup';
import { dkimRecordName, mailFromDomain, mailFromMxValue, ownershipRecordName, ownershipRecordValue } from './dns-records';

export type RecordStatus = 'SUCCESS' | 'FAILED' | 'TEMPORARY_FAILURE';

export interface RecordCheck {
  status: RecordStatus;
  /** What is wrong, naming the record; absent on SUCCESS. */
  problem?: string;
}

export interface DomainDnsCheck {
  dkim: RecordCheck;
  spf: RecordCheck;
  mx: RecordCheck;
  dmarc: RecordCheck;
  /** Only for a domain sharing another team's SES identity (it has an ownership token). */
  ownership?: RecordCheck;
}

export interface DnsCheckTarget {
  name: string;
  apex: string;
  region: string;
  dkimSelector: string;
  publicKey: string;
  ownershipToken?: string | null;
}

const ok: RecordCheck = { status: 'SUCCESS' };
const failed = (problem: string): RecordCheck => ({ status: 'FAILED', problem });

async function guarded(check: () => Promise<RecordCheck>): Promise<RecordCheck> {
  try {
    return await check();
  } catch (err) {
    if (err instanceof DnsTemporaryError) return { status: 'TEMPORARY_FAILURE', problem: err.message };
    throw err;
  }
}

// DKIM tag lists are `k=v; k=v`, and providers may add spaces inside the base64 when they wrap it.
function dkimPublicKeyOf(record: string): string | null {
  for (const tag of record.split(';')) {
    const eq = tag.indexOf('=');
    if (eq > 0 && tag.slice(0, eq).trim() === 'p') return tag.slice(eq + 1).replace(/\s+/g, '');
  }
  return null;
}

export function checkDkimRecord(dns: DnsLookup, name: string, selector: string, publicKey: string): Promise<RecordCheck> {
  const host = dkimRecordName(selector, name);
  return guarded(async () => {
    const records = await dns.txt(host);
    if (records.length === 0) return failed(`DKIM TXT record at ${host} not found`);
    if (!records.some((r) => dkimPublicKeyOf(r) === publicKey))
      return failed(`DKIM TXT record at ${host} does not contain this domain's public key`);
    return ok;
  });
}

export function checkSpfRecord(dns: DnsLookup, name: string): Promise<RecordCheck> {
  const host = mailFromDomain(name);
  return guarded(async () => {
    const spf = (await dns.txt(host)).filter((r) => /^v=spf1(\s|$)/i.test(r.trim()));
    if (spf.length === 0) return failed(`SPF TXT record at ${host} not found`);
    if (spf.length > 1) return failed(`${host} has ${spf.length} SPF TXT records; SPF allows only one`);
    if (!/(^|\s)[+~?-]?include:amazonses\.com(\s|$)/i.test(spf[0]))
      return failed(`SPF TXT record at ${host} does not include amazonses.com`);
    return ok;
  });
}

export function checkMailFromMx(dns: DnsLookup, name: string, region: string): Promise<RecordCheck> {
  const host = mailFromDomain(name);
  const expected = mailFromMxValue(region);
  return guarded(async () => {
    const mx = await dns.mx(host);
    if (mx.length === 0) return failed(`MX record at ${host} not found`);
    const exchanges = mx.map((m) => m.exchange.toLowerCase().replace(/\.$/, ''));
    if (!exchanges.includes(expected)) return failed(`MX record at ${host} points to ${exchanges.join(', ')} instead of ${expected}`);
    return ok;
  });
}

export function checkOwnershipRecord(dns: DnsLookup, name: string, token: string): Promise<RecordCheck> {
  const host = ownershipRecordName(name);
  const expected = ownershipRecordValue(token);
  return guarded(async () => {
    const records = await dns.txt(host);
    return records.some((r) => r.trim() === expected) ? ok : failed(`Ownership TXT record at ${host} with "${expected}" not found`);
  });
}

export function checkDmarcRecord(dns: DnsLookup, apex: string): Promise<RecordCheck> {
  const host = `_dmarc.${apex}`;
  return guarded(async () => {
    const records = await dns.txt(host);
    return records.some((r) => /^v=DMARC1\s*(;|$)/i.test(r.trim())) ? ok : failed(`DMARC TXT record at ${host} not found`);
  });
}

/** Looks every record of a domain up, in parallel. */
export async function checkDomainDns(dns: DnsLookup, t: DnsCheckTarget): Promise<DomainDnsCheck> {
  const [dkim, spf, mx, dmarc, ownership] = await Promise.all([
    checkDkimRecord(dns, t.name, t.dkimSelector, t.publicKey),
    checkSpfRecord(dns, t.name),
    checkMailFromMx(dns, t.name, t.region),
    checkDmarcRecord(dns, t.apex),
    t.ownershipToken ? checkOwnershipRecord(dns, t.name, t.ownershipToken) : undefined,
  ]);
  return { dkim, spf, mx, dmarc, ...(ownership ? { ownership } : {}) };
}
