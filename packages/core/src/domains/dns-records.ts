import type { Domain } from '../db/generated/client';

export interface DnsRecord {
  type: 'MX' | 'TXT';
  /** Relative to the registrable (apex) domain, as most DNS providers expect it. */
  name: string;
  /** The whole value, as useSend gives it. */
  value: string;
  ttl: 'Auto';
  status: string;
  priority?: string;
  recommended?: boolean;
  /**
   * TXT only: the value cut into strings of at most 255 characters, the longest a single DNS
   * character-string may be. A 2048-bit DKIM key needs two; resolvers join them back.
   */
  valueChunks?: string[];
}

const STATUSES = new Set(['NOT_STARTED', 'PENDING', 'SUCCESS', 'FAILED', 'TEMPORARY_FAILURE']);
const asStatus = (s: string | null | undefined) => (s && STATUSES.has(s) ? s : 'NOT_STARTED');

export const TXT_CHUNK = 255;

export function splitTxtValue(value: string): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < value.length; i += TXT_CHUNK) chunks.push(value.slice(i, i + TXT_CHUNK));
  return chunks.length ? chunks : [''];
}

export const mailFromDomain = (name: string) => `mail.${name}`;
export const dkimRecordName = (selector: string, name: string) => `${selector}._domainkey.${name}`;
export const mailFromMxValue = (region: string) => `feedback-smtp.${region}.amazonses.com`;
export const SPF_VALUE = 'v=spf1 include:amazonses.com ~all';
export const DMARC_VALUE = 'v=DMARC1; p=none;';

type RecordSource = Pick<Domain, 'subdomain' | 'region' | 'dkimSelector' | 'publicKey' | 'dkimStatus' | 'spfDetails' | 'dmarcAdded'>;

/** The records a customer must publish (useSend's table: MX and SPF for MAIL FROM, DKIM, DMARC). */
export function buildDnsRecords(d: RecordSource): DnsRecord[] {
  const sfx = d.subdomain ? `.${d.subdomain}` : '';
  const txt = (name: string, value: string, status: string, extra: Partial<DnsRecord> = {}): DnsRecord => ({
    type: 'TXT', name, value, ttl: 'Auto', status, ...extra, valueChunks: splitTxtValue(value),
  });
  return [
    { type: 'MX', name: `mail${sfx}`, value: mailFromMxValue(d.region), ttl: 'Auto', priority: '10', status: asStatus(d.spfDetails) },
    txt(`${d.dkimSelector}._domainkey${sfx}`, `p=${d.publicKey}`, asStatus(d.dkimStatus)),
    txt(`mail${sfx}`, SPF_VALUE, asStatus(d.spfDetails)),
    txt('_dmarc', DMARC_VALUE, d.dmarcAdded ? 'SUCCESS' : 'NOT_STARTED', { recommended: true }),
  ];
}
