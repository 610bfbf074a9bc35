import type { Db } from '@mailrail/platform/db/client';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { Domain, DomainStatus } from '@mailrail/platform/db/generated/client';
import type { IdentityPort, IdentityStatus } from '../ses-identity/port';
import { checkDomainDns, type DomainDnsCheck, type RecordCheck } from './dns-check';
import type { DnsLookup } from './dns-lookup';
import { OWNERSHIP_RECORD_MISSING } from './dns-records';
import { recordDomainEvent } from './domain-events';
import { parseDomainName } from './domain-name';
import { nextDomainCheckAt, propagationEndsAt, type ScheduleConfig } from './verification-schedule';

export interface VerifyDomainDeps {
  db: Db;
  identities: IdentityPort;
  dns: DnsLookup;
  config: ScheduleConfig;
  now?: () => Date;
}

/** The verificationError of a PENDING domain whose records are not (all) visible yet, within the propagation window. */
export const DNS_RECORDS_PROPAGATING = 'DNS_RECORDS_PROPAGATING';

type IdentityRead = { kind: 'found'; status: IdentityStatus } | { kind: 'missing' } | { kind: 'unavailable'; message: string };

export interface VerificationOutcome {
  status: DomainStatus;
  dkimStatus: string;
  spfDetails: string;
  dmarcAdded: boolean | null;
  errorMessage: string | null;
  verificationError: string | null;
}

// The worst of several record checks: a wrong record beats a timeout, which beats success.
function worst(...checks: RecordCheck[]): RecordCheck {
  return checks.find((c) => c.status === 'FAILED') ?? checks.find((c) => c.status === 'TEMPORARY_FAILURE') ?? { status: 'SUCCESS' };
}

function recordStatus(dnsCheck: RecordCheck, fromSes: string | undefined): string {
  if (dnsCheck.status !== 'SUCCESS') return dnsCheck.status;
  return fromSes ?? 'PENDING';
}

/**
 * Combines what SES says about the identity with what DNS says about the records. DNS is
 * checked by us as well so that the message can name the record that is missing or wrong,
 * which SES never does. A wrong record makes the domain FAILED; a DNS or SES hiccup makes it
 * TEMPORARY_FAILURE, except for a verified domain, which stays verified (our resolver's bad
 * minute must not stop its mail) and is looked at again soon.
 */
export function decideVerification(
  current: Pick<Domain, 'status' | 'dmarcAdded'>,
  identity: IdentityRead,
  dns: DomainDnsCheck,
  /** A domain that never verified, within DNS_PROPAGATION_HOURS of being added: records may not show yet. */
  propagating = false,
): VerificationOutcome {
  const ses = identity.kind === 'found' ? identity.status : undefined;
  const mailFrom = worst(dns.mx, dns.spf);
  const dkimStatus = recordStatus(dns.dkim, ses?.dkimStatus);
  const spfDetails = recordStatus(mailFrom, ses?.mailFromStatus);
  const dmarcAdded = dns.dmarc.status === 'TEMPORARY_FAILURE' ? null : dns.dmarc.status === 'SUCCESS';

  // A team sharing another team's SES identity must also show its own ownership record: SES and
  // the shared DKIM record say nothing about which team controls the name.
  const required = [dns.dkim, dns.spf, dns.mx, ...(dns.ownership ? [dns.ownership] : [])];
  const wrong = required.filter((c) => c.status === 'FAILED').map((c) => c.problem!);
  const flaky = required.filter((c) => c.status === 'TEMPORARY_FAILURE').map((c) => c.problem!);
  const base = { dkimStatus, spfDetails, dmarcAdded };

  if (identity.kind === 'missing') {
    return {
      ...base,
      status: 'FAILED',
      errorMessage: 'The SES identity of this domain does not exist; delete the domain and add it again',
      verificationError: 'IDENTITY_NOT_FOUND',
    };
  }
  if (wrong.length && propagating) {
    // Not FAILED yet, and neither are its records (as SES keeps them PENDING for 72 hours): what
    // was (not) found is said, and the domain is checked again at the usual cadence.
    const notYet = (status: string) => (status === 'FAILED' ? 'PENDING' : status);
    return {
      ...base,
      dkimStatus: notYet(dkimStatus),
      spfDetails: notYet(spfDetails),
      status: 'PENDING',
      errorMessage: wrong.join('; '),
      verificationError: DNS_RECORDS_PROPAGATING,
    };
  }
  if (wrong.length) {
    const onlyOwnership = dns.ownership?.status === 'FAILED' && wrong.length === 1;
    const verificationError = onlyOwnership ? OWNERSHIP_RECORD_MISSING : (ses?.errorType ?? 'DNS_RECORDS_INVALID');
    return { ...base, status: 'FAILED', errorMessage: wrong.join('; '), verificationError };
  }
  if (identity.kind === 'unavailable') flaky.push(identity.message);
  if (flaky.length) {
    const status: DomainStatus = current.status === 'SUCCESS' ? 'SUCCESS' : 'TEMPORARY_FAILURE';
    return {
      ...base,
      status,
      errorMessage: flaky.join('; '),
      verificationError: identity.kind === 'unavailable' ? 'SES_UNAVAILABLE' : 'DNS_SERVER_ERROR',
    };
  }
  const sesStatus = ses!.verificationStatus;
  if (sesStatus === 'FAILED') {
    return {
      ...base,
      status: 'FAILED',
      errorMessage: `SES could not verify the domain${ses!.errorType ? ` (${ses!.errorType})` : ''}`,
      verificationError: ses!.errorType ?? 'SES_VERIFICATION_FAILED',
    };
  }
  const allGood = sesStatus === 'SUCCESS' && dkimStatus === 'SUCCESS' && spfDetails === 'SUCCESS';
  if (allGood) return { ...base, status: 'SUCCESS', errorMessage: null, verificationError: null };
  // The records are right and SES has not caught up yet (it retries for up to 72 hours).
  const status: DomainStatus = sesStatus === 'TEMPORARY_FAILURE' ? 'TEMPORARY_FAILURE' : 'PENDING';
  return { ...base, status, errorMessage: null, verificationError: ses!.errorType ?? null };
}

async function readIdentity(identities: IdentityPort, domain: Domain): Promise<IdentityRead> {
  try {
    const status = await identities.getIdentityStatus({ domain: domain.name, region: domain.region });
    return status ? { kind: 'found', status } : { kind: 'missing' };
  } catch (err) {
    return { kind: 'unavailable', message: `SES identity status unavailable: ${(err as Error).message}` };
  }
}

/**
 * Checks one domain (SES identity and DNS) and stores the outcome. A status change writes
 * `domain.verified` (new status SUCCESS) or `domain.updated` to the outbox in the same
 * transaction. Returns the updated row, or null when the domain no longer exists.
 */
export async function verifyDomain(deps: VerifyDomainDeps, domainId: number): Promise<Domain | null> {
  const domain = await deps.db.domain.findUnique({ where: { id: domainId } });
  if (!domain) return null;
  const parsed = parseDomainName(domain.name);
  const apex = parsed.ok ? parsed.apex : domain.name;
  const [identity, dns] = await Promise.all([
    readIdentity(deps.identities, domain),
    checkDomainDns(deps.dns, {
      name: domain.name,
      apex,
      region: domain.region,
      dkimSelector: domain.dkimSelector,
      publicKey: domain.publicKey,
      ownershipToken: domain.ownershipToken,
    }),
  ]);
  const now = deps.now?.() ?? new Date();

  return deps.db.$transaction(async (tx) => {
    // Lock the row so the status we compare against is the one we overwrite.
    const locked = await prismaExecutor(tx).query<{
      status: DomainStatus;
      dmarcAdded: boolean;
      isVerifying: boolean;
      hasEverVerified: boolean;
    }>(`SELECT status, "dmarcAdded", "isVerifying", "hasEverVerified" FROM "Domain" WHERE id = $1::int FOR UPDATE`, [domainId]);
    if (locked.length === 0) return null;
    const before = locked[0];
    const propagating = !before.hasEverVerified && now < propagationEndsAt(domain.createdAt);
    const outcome = decideVerification(before, identity, dns, propagating);
    const verified = outcome.status === 'SUCCESS';
    const updated = await tx.domain.update({
      where: { id: domainId },
      data: {
        status: outcome.status,
        dkimStatus: outcome.dkimStatus,
        spfDetails: outcome.spfDetails,
        dmarcAdded: outcome.dmarcAdded ?? before.dmarcAdded,
        errorMessage: outcome.errorMessage,
        verificationError: outcome.verificationError,
        // A requested verification ends with a definite answer, "not seen yet" included (the next
        // one is hours away); SES catching up and hiccups keep it going.
        isVerifying:
          before.isVerifying &&
          outcome.status !== 'SUCCESS' &&
          outcome.status !== 'FAILED' &&
          outcome.verificationError !== DNS_RECORDS_PROPAGATING,
        hasEverVerified: before.hasEverVerified || verified,
        lastCheckedTime: now,
        // A verified domain whose check hiccuped is looked at again at the faster cadence.
        nextCheckAt: nextDomainCheckAt(deps.config, verified && !outcome.errorMessage, now),
      },
    });
    if (outcome.status !== before.status) {
      await recordDomainEvent(tx, verified ? 'domain.verified' : 'domain.updated', updated);
    }
    return updated;
  });
}
