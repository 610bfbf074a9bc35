import type { Db } from '@mailrail/platform/db/client';
import type { Domain } from '@mailrail/platform/db/generated/client';
import { ApiError, type Issue } from '../errors/api-error';
import { parseAddress } from '../emails/address';

// The one rule for "may this team (and this key) send from this address": emails (single and
// batch), campaigns and contact-book double opt-in all ask it here. The domain of the address
// must be one of the team's, verified (SUCCESS), and, for a key bound to a domain, that domain.

export type SenderDomainRefusal = 'forbidden' | 'not-found' | 'not-verified';

export type SenderDomainCheck<D> = { ok: true; domain: D } | { ok: false; refusal: SenderDomainRefusal; message: string };

/** The wire message of each refusal (pinned by the emails and campaigns tests). */
export function senderDomainMessage(refusal: SenderDomainRefusal, domainName: string): string {
  switch (refusal) {
    case 'forbidden':
      return `API key does not have access to domain: ${domainName}`;
    case 'not-found':
      return `Domain: ${domainName} not found. Add it and verify it before sending`;
    case 'not-verified':
      return `Domain: ${domainName} is not verified`;
  }
}

/**
 * Judges a team domain already looked up by name (null: the team has none of that name). A key
 * bound to another domain is refused first, so it learns nothing about the team's other domains.
 */
export function checkSenderDomain<D extends { id: number; status: string }>(
  domain: D | null,
  domainName: string,
  boundDomainId: number | null,
): SenderDomainCheck<D> {
  let refusal: SenderDomainRefusal | null = null;
  if (boundDomainId !== null && domain?.id !== boundDomainId) refusal = 'forbidden';
  else if (!domain) refusal = 'not-found';
  else if (domain.status !== 'SUCCESS') refusal = 'not-verified';
  if (refusal) return { ok: false, refusal, message: senderDomainMessage(refusal, domainName) };
  return { ok: true, domain: domain! };
}

/** The team's domain named `domainName` (lower-case, as stored), read from the database. */
export const findTeamDomainByName = (db: Db, teamId: number, domainName: string): Promise<Domain | null> =>
  db.domain.findFirst({ where: { teamId, name: domainName } });

/**
 * The sender-domain rule for an address (`addr` or `Name <addr>`, validated by the caller): the
 * team's verified domain it sends from, or why not.
 */
export async function findVerifiedSenderDomain(
  db: Db,
  teamId: number,
  address: string,
  boundDomainId: number | null,
): Promise<SenderDomainCheck<Domain>> {
  const domainName = parseAddress(address)?.domain ?? address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  return checkSenderDomain(await findTeamDomainByName(db, teamId, domainName), domainName, boundDomainId);
}

/**
 * The refusal as the emails and campaigns routes answer it: a key bound to another domain is a 403,
 * an unknown or unverified domain a 400 whose issue sits on `path` (the `from` field).
 */
export function senderDomainError(check: { refusal: SenderDomainRefusal; message: string }, path: Issue['path']): ApiError {
  if (check.refusal === 'forbidden') return new ApiError('FORBIDDEN', check.message);
  return new ApiError('BAD_REQUEST', check.message, [{ path, message: check.message }]);
}
