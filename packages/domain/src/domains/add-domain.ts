import type { Config } from '@mailrail/platform/config/schema';
import { decryptSecret, encryptSecret } from '@mailrail/platform/crypto/secrets';
import type { Db } from '@mailrail/platform/db/client';
import type { Domain, Prisma } from '@mailrail/platform/db/generated/client';
import { ApiError, badRequest, conflict } from '../errors/api-error';
import { IdentityExistsError, IdentityServiceError, type IdentityPort } from '../ses-identity/port';
import { generateDkimKeyPair } from './dkim';
import { recordDomainEvent } from './domain-events';
import { parseDomainName } from './domain-name';
import { mailFromDomain } from './dns-records';
import { findIdentityHolder, lockSesIdentity, newOwnershipToken } from './shared-identity';
import { nextDomainCheckAt } from './verification-schedule';

export interface AddDomainInput {
  teamId: number;
  name: string;
  region: string;
  dkimSelector: string;
  subdomain?: string | null;
  clickTracking?: boolean;
  openTracking?: boolean;
  /** Operator override for sandboxes: the domain is stored as verified. */
  verified?: boolean;
  nextCheckAt?: Date | null;
  /** When it was added (default: the database's now): its DNS propagation window starts then. */
  createdAt?: Date;
  /** A key pair made beforehand (createDomain hands the same private key to SES). */
  keyPair?: { publicKey: string; privateKeyPem: string };
  /** Set when the row shares another team's SES identity (see shared-identity.ts). */
  ownershipToken?: string | null;
}

/**
 * Stores a domain row with a DKIM key (the private half encrypted with SECRET). No validation and
 * no SES identity: createDomain is the whole operation; this is its storage step and a test helper.
 */
export async function insertDomain(db: Db | Prisma.TransactionClient, secret: string, input: AddDomainInput): Promise<Domain> {
  const { publicKey, privateKeyPem } = input.keyPair ?? (await generateDkimKeyPair());
  const verified = input.verified === true;
  return db.domain.create({
    data: {
      teamId: input.teamId,
      name: input.name.toLowerCase(),
      region: input.region,
      publicKey,
      dkimPrivateKeyEnc: encryptSecret(secret, privateKeyPem),
      dkimSelector: input.dkimSelector,
      subdomain: input.subdomain ?? null,
      clickTracking: input.clickTracking ?? false,
      openTracking: input.openTracking ?? false,
      status: verified ? 'SUCCESS' : 'PENDING',
      dkimStatus: verified ? 'SUCCESS' : 'NOT_STARTED',
      spfDetails: verified ? 'SUCCESS' : 'NOT_STARTED',
      hasEverVerified: verified,
      lastCheckedTime: verified ? new Date() : null,
      nextCheckAt: input.nextCheckAt ?? null,
      ownershipToken: input.ownershipToken ?? null,
      ...(input.createdAt ? { createdAt: input.createdAt } : {}),
    },
  });
}

export interface CreateDomainDeps {
  db: Db;
  config: Pick<Config, 'SECRET' | 'DKIM_SELECTOR' | 'AWS_REGION' | 'sesRegions' | 'DOMAIN_CHECK_CRON' | 'DOMAIN_RECHECK_CRON'>;
  identities: IdentityPort;
  now?: () => Date;
}

export interface CreateDomainInput {
  teamId: number;
  name: string;
  /** Defaults to AWS_REGION. */
  region?: string;
  clickTracking?: boolean;
  openTracking?: boolean;
  /** CLI sandboxes: store as verified; an identity that already exists in SES is accepted. */
  verified?: boolean;
}

const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === 'P2002';

/** SES failures as API errors: SES's own refusals are the caller's to fix, the rest is retryable. */
export function identityErrorToApiError(err: unknown): unknown {
  if (err instanceof IdentityExistsError) return conflict(`An SES identity for ${err.domain} already exists`);
  if (err instanceof IdentityServiceError) {
    if (['BadRequestException', 'LimitExceededException', 'InvalidParameterValue'].includes(err.sesErrorName))
      return badRequest(err.message);
    return new ApiError('SERVICE_UNAVAILABLE', `${err.message}; retry shortly`);
  }
  return err;
}

/**
 * Registers a sending domain: validates the name (public suffix list) and region, makes an RSA 2048
 * DKIM key, stores the row PENDING with a `domain.created` outbox event and registers the SES
 * identity (BYODKIM, MAIL FROM mail.<name>), all or nothing. The identity call runs inside the
 * transaction, after the row insert and under the identity's advisory lock, so a concurrent add
 * of the same name waits, and a refused SES call rolls the row back.
 *
 * Names are unique per team. When another team already uses the name in the same region, SES has
 * one identity for both: the new row shares that identity's DKIM key and selector, SES is not
 * called, and the row gets an ownership token that its team must publish as a TXT record before
 * the domain can be verified (another team's records prove nothing about this one).
 */
export async function createDomain(deps: CreateDomainDeps, input: CreateDomainInput): Promise<Domain> {
  const parsed = parseDomainName(input.name);
  if (!parsed.ok)
    throw badRequest(`Invalid domain name: "${input.name}" ${parsed.reason}`, [
      { path: ['name'], message: `Domain name ${parsed.reason}` },
    ]);
  const region = input.region ?? deps.config.AWS_REGION;
  if (!deps.config.sesRegions.includes(region)) {
    const allowed = deps.config.sesRegions.join(', ');
    throw badRequest(`Region "${region}" is not configured; use one of: ${allowed}`, [
      { path: ['region'], message: `Must be one of: ${allowed}` },
    ]);
  }
  if (await deps.db.domain.findFirst({ where: { teamId: input.teamId, name: parsed.name }, select: { id: true } })) {
    throw conflict(`Domain ${parsed.name} already exists`);
  }

  const ownKeyPair = await generateDkimKeyPair();
  const now = deps.now?.() ?? new Date();
  const verified = input.verified === true;
  let identityCreated = false;
  try {
    return await deps.db.$transaction(
      async (tx) => {
        await lockSesIdentity(tx, parsed.name, region);
        const holder = await findIdentityHolder(tx, parsed.name, region);
        // A sharing row publishes (and SES signs with) the identity's key, not a new one.
        const keyPair = holder
          ? {
              publicKey: holder.publicKey,
              privateKeyPem: holder.dkimPrivateKeyEnc
                ? decryptSecret(deps.config.SECRET, holder.dkimPrivateKeyEnc)
                : ownKeyPair.privateKeyPem,
            }
          : ownKeyPair;
        const domain = await insertDomain(tx, deps.config.SECRET, {
          teamId: input.teamId,
          name: parsed.name,
          region,
          dkimSelector: holder?.dkimSelector ?? deps.config.DKIM_SELECTOR,
          ownershipToken: holder ? newOwnershipToken() : null,
          subdomain: parsed.subdomain,
          clickTracking: input.clickTracking,
          openTracking: input.openTracking,
          verified,
          keyPair,
          nextCheckAt: nextDomainCheckAt(deps.config, verified, now),
          createdAt: now,
        });
        await recordDomainEvent(tx, 'domain.created', domain);
        // The identity exists already and is not this team's to create or change.
        if (holder) return domain;
        try {
          await deps.identities.createIdentity(
            {
              domain: parsed.name,
              region,
              dkimSelector: deps.config.DKIM_SELECTOR,
              dkimPrivateKey: keyPair.privateKeyPem,
              mailFromDomain: mailFromDomain(parsed.name),
            },
            tx,
          );
          identityCreated = true;
        } catch (err) {
          if (!(verified && err instanceof IdentityExistsError)) throw err;
        }
        return domain;
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`Domain ${parsed.name} already exists`);
    // The commit failed after SES accepted: we still held the name, so the identity is ours to undo.
    if (identityCreated) await deps.identities.deleteIdentity({ domain: parsed.name, region }).catch(() => undefined);
    throw identityErrorToApiError(err);
  }
}
