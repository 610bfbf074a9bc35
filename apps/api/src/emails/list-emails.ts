import { z } from 'zod';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { intString, pageQuery } from '../http/query';

const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
export const listEmailsQuery = z.object({
  ...pageQuery,
  startDate: isoDate.optional(),
  endDate: isoDate.optional(),
  // One value or the parameter repeated: ?domainId=1&domainId=2.
  domainId: z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .pipe(z.array(intString(1)))
    .optional(),
});

export type ListEmailsQuery = z.infer<typeof listEmailsQuery>;

/** Newest first; `count` is the total matching, for pagination. */
export async function listEmails(deps: ApiDeps, auth: AuthContext, q: ListEmailsQuery) {
  const domainFilter = auth.domainId !== null ? [auth.domainId] : q.domainId;
  const where = {
    teamId: auth.teamId,
    ...(domainFilter ? { domainId: { in: domainFilter } } : {}),
    ...(q.startDate || q.endDate ? { createdAt: { ...(q.startDate ? { gte: q.startDate } : {}), ...(q.endDate ? { lte: q.endDate } : {}) } } : {}),
  };
  const [rows, count] = await Promise.all([
    deps.db.email.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (q.page - 1) * q.limit,
      take: q.limit,
      select: {
        id: true, to: true, from: true, subject: true, html: true, text: true, createdAt: true, updatedAt: true,
        latestStatus: true, scheduledAt: true, domainId: true, replyTo: true, cc: true, bcc: true,
      },
    }),
    deps.db.email.count({ where }),
  ]);
  return { data: rows, count };
}
