import { announceApiKeyRevocations, type ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import { ApiError, notFound } from '@mailrail/domain/errors/api-error';
import { createDomain, identityErrorToApiError } from '@mailrail/domain/domains/add-domain';
import { domainView, type DomainView } from '@mailrail/domain/domains/domain-view';
import { enqueueDomainVerification } from '@mailrail/domain/domains/verification-schedule';
import { findIdentityHolder, lockSesIdentity } from '@mailrail/domain/domains/shared-identity';
import { recordDomainEvent } from '@mailrail/domain/domains/domain-events';
import { type Domain } from '@mailrail/platform/db/generated/client';
import { type IdentityPort } from '@mailrail/domain/ses-identity/port';
import { type Metrics } from '@mailrail/platform/metrics/metrics';
import { z } from 'zod';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';

export type DomainDeps = ApiDeps & {
  identities: IdentityPort;
  metrics?: Pick<Metrics, 'apiKeyRevocationsUnannounced'>;
  /** This process's verified keys: deleting a domain evicts the keys bound to it. */
  apiKeyCache: ApiKeyCache | null;
};

export const createDomainBody = z.object({
  name: z.string().min(1).max(300),
  // Required by useSend; here it defaults to AWS_REGION.
  region: z.string().min(1).max(64).optional(),
  clickTracking: z.boolean().optional(),
  openTracking: z.boolean().optional(),
});

export const updateDomainBody = z.object({
  clickTracking: z.boolean().optional(),
  openTracking: z.boolean().optional(),
});

// Anything but digits is a malformed id (400); a number no row can have is simply not found.
export const domainIdParam = z.object({
  id: z
    .string()
    .max(18, 'must be a positive integer')
    .regex(/^\d{1,18}$/, 'must be a positive integer')
    .transform(Number),
});

const MAX_INT4 = 2_147_483_647;
const domainNotFound = () => notFound('Domain not found');

/** The team's domain, also within the key's domain when the key is bound to one; else 404. */
async function findDomain(deps: ApiDeps, auth: AuthContext, id: number): Promise<Domain> {
  if (id < 1 || id > MAX_INT4 || (auth.domainId !== null && auth.domainId !== id)) throw domainNotFound();
  const domain = await deps.db.domain.findFirst({ where: { id, teamId: auth.teamId } });
  if (!domain) throw domainNotFound();
  return domain;
}

export async function addDomain(deps: DomainDeps, auth: AuthContext, body: z.infer<typeof createDomainBody>): Promise<DomainView> {
  // A key bound to one domain acts for that domain only; adding others is beyond it.
  if (auth.domainId !== null) throw new ApiError('FORBIDDEN', 'This API key is restricted to one domain and cannot add domains');
  const domain = await createDomain(
    { db: deps.db, config: deps.config, identities: deps.identities, now: () => deps.clock.now() },
    { teamId: auth.teamId, name: body.name, region: body.region, clickTracking: body.clickTracking, openTracking: body.openTracking },
  );
  return domainView(domain);
}

/** Newest first; a key bound to a domain sees only that one. */
export async function listDomains(deps: ApiDeps, auth: AuthContext): Promise<DomainView[]> {
  const rows = await deps.db.domain.findMany({
    where: { teamId: auth.teamId, ...(auth.domainId !== null ? { id: auth.domainId } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  return rows.map(domainView);
}

export async function getDomain(deps: ApiDeps, auth: AuthContext, id: number): Promise<DomainView> {
  return domainView(await findDomain(deps, auth, id));
}

/**
 * Marks the domain as being verified and asks the worker to check it now. nextCheckAt = now too,
 * so the sweep still checks it if the job is lost with Redis.
 */
export async function startDomainVerification(deps: ApiDeps, auth: AuthContext, id: number): Promise<{ message: string }> {
  const domain = await findDomain(deps, auth, id);
  await deps.db.domain.update({ where: { id: domain.id }, data: { isVerifying: true, nextCheckAt: deps.clock.now() } });
  await enqueueDomainVerification(deps.queues, domain.id).catch((err) =>
    deps.log.warn({ err, domainId: domain.id }, 'verification job not enqueued; the sweep will pick the domain up'),
  );
  return { message: 'Domain verification started' };
}

export async function updateDomain(
  deps: ApiDeps,
  auth: AuthContext,
  id: number,
  body: z.infer<typeof updateDomainBody>,
): Promise<DomainView> {
  const domain = await findDomain(deps, auth, id);
  const changes = Object.fromEntries(Object.entries(body).filter(([k, v]) => v !== undefined && domain[k as keyof typeof body] !== v));
  if (Object.keys(changes).length === 0) return domainView(domain);
  const updated = await deps.db.$transaction(async (tx) => {
    const row = await tx.domain.update({ where: { id: domain.id }, data: changes });
    await recordDomainEvent(tx, 'domain.updated', row);
    return row;
  });
  return domainView(updated);
}

/**
 * Deletes the row, its SES identity and the API keys bound to it, with a `domain.deleted` event.
 * The keys go too: the schema would otherwise set their domainId to null, silently turning a
 * key restricted to this domain into one for the whole team. The SES call runs inside the
 * transaction, so if SES refuses, nothing is deleted. The identity is shared by every team that
 * has the name in that region, so it is deleted only with the last such row (under the identity's
 * lock, so a concurrent add either sees this row or finds the identity gone and creates it).
 */
export async function deleteDomain(
  deps: DomainDeps,
  auth: AuthContext,
  id: number,
): Promise<{ id: number; success: true; message: string }> {
  const domain = await findDomain(deps, auth, id);
  let revokedClientIds: string[] = [];
  try {
    await deps.db.$transaction(
      async (tx) => {
        await lockSesIdentity(tx, domain.name, domain.region);
        // Keys first: deleting the row sets their domainId to null.
        const keys = await tx.apiKey.findMany({ where: { domainId: domain.id, revokedAt: null }, select: { clientId: true } });
        revokedClientIds = keys.map((k) => k.clientId);
        await tx.apiKey.updateMany({ where: { domainId: domain.id, revokedAt: null }, data: { revokedAt: deps.clock.now() } });
        const gone = await tx.domain.deleteMany({ where: { id: domain.id, teamId: auth.teamId } });
        if (gone.count === 0) throw domainNotFound();
        await recordDomainEvent(tx, 'domain.deleted', domain);
        if (await findIdentityHolder(tx, domain.name, domain.region)) return;
        await deps.identities.deleteIdentity({ domain: domain.name, region: domain.region });
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
  } catch (err) {
    throw identityErrorToApiError(err);
  }
  // The keys are revoked in PostgreSQL whatever happens next; a failed announcement is logged and
  // counted there (other replicas then drop the key when their cache expires).
  await announceApiKeyRevocations(deps, revokedClientIds);
  return { id: domain.id, success: true, message: 'Domain deleted successfully' };
}
