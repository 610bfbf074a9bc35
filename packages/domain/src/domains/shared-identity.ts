import { randomBytes } from 'node:crypto';
import type { Prisma } from '@mailrail/platform/db/generated/client';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';

// SES identities are per AWS account and region, and a mailrail installation is one account, so
// every team that adds the same name in the same region shares one SES identity (one DKIM key,
// one MAIL FROM). These helpers keep that sharing safe: who may create or delete the identity is
// decided under one lock per identity, and a team that did not create it must prove control of
// the name with its own TXT record (docs/domains.md, "One name in several teams").

/** Serialises adds and deletes of one SES identity until the transaction ends. */
export async function lockSesIdentity(tx: Prisma.TransactionClient, name: string, region: string): Promise<void> {
  await prismaExecutor(tx).execute('SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))', [`ses-identity:${region}:${name}`]);
}

/** Another domain row (of any team) using the SES identity of `name` in `region`, oldest first. */
export function findIdentityHolder(tx: Prisma.TransactionClient, name: string, region: string, exceptId?: number) {
  return tx.domain.findFirst({
    where: { name, region, ...(exceptId !== undefined ? { id: { not: exceptId } } : {}) },
    orderBy: { id: 'asc' },
    select: { id: true, dkimSelector: true, publicKey: true, dkimPrivateKeyEnc: true },
  });
}

/** The value a sharing team publishes at `_mailrail-verification.<name>`: 128 random bits. */
export function newOwnershipToken(): string {
  return randomBytes(16).toString('hex');
}
