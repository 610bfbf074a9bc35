import type { Domain } from '@mailrail/platform/db/generated/client';
import { toIdentityStatusValue } from '../ses-identity/port';

/** What a record is for (mailrail; not in useSend). */
export type DnsRecordPurpose = 'MAIL_FROM' | 'SPF' | 'DKIM' | 'DMARC' | 'OWNERSHIP';

export interface DnsRecord {
  type: 'MX' | 'TXT';
  /** Relative to the registrable (apex) domain, as most DNS providers expect it. */
  name: string;
  /** The whole name, `name` + `.` + `zone` (mailrail; not in useSend). */
  fullName: string;
  /** The zone (registrable domain) `name` is relative to: where the record is added (mailrail). */
  zone: string;
  purpose: DnsRecordPurpose;
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

export const TXT_CHUNK = 255;

export function splitTxtValue(value: string): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < value.length; i += TXT_CHUNK) chunks.push(value.slice(i, i + TXT_CHUNK));
  return chunks.length ? chunks : [''];
}

export const mailFromDomain = (name: string) => `mail.${name}`;
export const dkimRecordName = (selector: string, name: string) => `${selector}._domainkey.${name}`;
export const mailFromMxValue = (region: string) => `feedback-smtp.${region}.amazonses.com`;
/** Where a team sharing another team's SES identity proves that it controls the name. */
export const ownershipRecordName = (name: string) => `_mailrail-verification.${name}`;
export const ownershipRecordValue = (token: string) => `mailrail-verification=${token}`;
export const OWNERSHIP_RECORD_MISSING = 'OWNERSHIP_RECORD_MISSING';
export const SPF_VALUE = 'v=spf1 include:amazonses.com ~all';
export const DMARC_VALUE = 'v=DMARC1; p=none;';

type RecordSource = Pick<
  Domain,
  'name' | 'subdomain' | 'region' | 'dkimSelector' | 'publicKey' | 'dkimStatus' | 'spfDetails' | 'dmarcAdded'
> &
  Partial<Pick<Domain, 'ownershipToken' | 'status' | 'verificationError'>>;

/**
 * The records a customer must publish (useSend's table: MX and SPF for MAIL FROM, DKIM, DMARC),
 * plus, for a domain sharing another team's SES identity, its own ownership TXT record.
 */
export function buildDnsRecords(d: RecordSource): DnsRecord[] {
  const sfx = d.subdomain ? `.${d.subdomain}` : '';
  // The registrable domain: the name without its subdomain (decided by the public suffix list when added).
  const zone = d.subdomain ? d.name.slice(d.subdomain.length + 1) : d.name;
  const named = (name: string, purpose: DnsRecordPurpose) => ({ name, fullName: `${name}.${zone}`, zone, purpose });
  const txt = (name: string, purpose: DnsRecordPurpose, value: string, status: string, extra: Partial<DnsRecord> = {}): DnsRecord => ({
    type: 'TXT',
    ...named(name, purpose),
    value,
    ttl: 'Auto',
    status,
    ...extra,
    valueChunks: splitTxtValue(value),
  });
  const ownership = d.ownershipToken
    ? [txt(`_mailrail-verification${sfx}`, 'OWNERSHIP', ownershipRecordValue(d.ownershipToken), ownershipStatus(d))]
    : [];
  return [
    {
      type: 'MX',
      ...named(`mail${sfx}`, 'MAIL_FROM'),
      value: mailFromMxValue(d.region),
      ttl: 'Auto',
      priority: '10',
      status: toIdentityStatusValue(d.spfDetails),
    },
    txt(`${d.dkimSelector}._domainkey${sfx}`, 'DKIM', `p=${d.publicKey}`, toIdentityStatusValue(d.dkimStatus)),
    txt(`mail${sfx}`, 'SPF', SPF_VALUE, toIdentityStatusValue(d.spfDetails)),
    txt('_dmarc', 'DMARC', DMARC_VALUE, d.dmarcAdded ? 'SUCCESS' : 'NOT_STARTED', { recommended: true }),
    ...ownership,
  ];
}

// No column of its own: a verified domain has it, a check that found it missing says so.
function ownershipStatus(d: Partial<Pick<Domain, 'status' | 'verificationError'>>): string {
  if (d.status === 'SUCCESS') return 'SUCCESS';
  return d.verificationError === OWNERSHIP_RECORD_MISSING ? 'FAILED' : 'PENDING';
}
