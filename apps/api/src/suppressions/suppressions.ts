import { z } from 'zod';
import { normalisedEmailField } from '@mailrail/domain/emails/address';
import { suppressAddresses } from '@mailrail/domain/emails/suppress-addresses';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { notFound } from '@mailrail/domain/errors/api-error';
import { Prisma } from '@mailrail/platform/db/generated/client';
import { SuppressionReason } from '@mailrail/platform/db/generated/enums';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { MAX_SHORT_TEXT_LENGTH } from '../http/limits';
import { intString } from '../http/query';

export const listSuppressionsQuery = z.object({
  page: intString(1, 1_000_000).default(1),
  limit: intString(1, 100).default(50),
  search: z.string().max(MAX_SHORT_TEXT_LENGTH).optional(),
});

const normalisedEmail = normalisedEmailField();
export const suppressionReason = z.enum(SuppressionReason);

export const addSuppressionBody = z.object({
  email: normalisedEmail,
  reason: suppressionReason.optional(),
});

export const suppressionEmailParam = z.object({ email: normalisedEmail });

const SELECT = { id: true, email: true, reason: true, source: true, createdAt: true, updatedAt: true } as const;

/** Newest first; `search` matches a substring of the address. */
export async function listSuppressions(deps: ApiDeps, auth: AuthContext, q: z.infer<typeof listSuppressionsQuery>) {
  // Prisma passes LIKE wildcards through: escape them so the search is a plain substring.
  const search = q.search
    ?.trim()
    .toLowerCase()
    .replace(/[\\%_]/g, (c) => `\\${c}`);
  const where: Prisma.SuppressionWhereInput = { teamId: auth.teamId, ...(search ? { email: { contains: search } } : {}) };
  const [data, count] = await Promise.all([
    deps.db.suppression.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (q.page - 1) * q.limit,
      take: q.limit,
      select: SELECT,
    }),
    deps.db.suppression.count({ where }),
  ]);
  return { data, count };
}

/**
 * Idempotent add. An address already on the list keeps its row; its reason changes only when
 * the request names one (so re-adding without a reason does not hide a hard bounce). Campaign
 * emails to the address that are written but not yet sending are withdrawn (suppressAddresses).
 */
export async function addSuppression(deps: ApiDeps, auth: AuthContext, body: z.infer<typeof addSuppressionBody>) {
  const [row] = await suppressAddresses(prismaExecutor(deps.db), {
    teamId: auth.teamId,
    emails: [body.email],
    reason: body.reason ?? null,
    source: null,
    now: deps.clock.now(),
  });
  return row;
}

export async function removeSuppression(deps: ApiDeps, auth: AuthContext, email: string) {
  const removed = await deps.db.suppression.deleteMany({ where: { teamId: auth.teamId, email } });
  if (removed.count === 0) throw notFound('Suppression not found');
  return { email, success: true, message: 'Suppression removed' };
}
