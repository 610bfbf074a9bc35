import { z } from 'zod';
import { notFound, Prisma, utcDay } from '@mailrail/core';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';

const domainIdParam = z
  .string()
  .regex(/^\d+$/, 'must be a positive integer')
  .transform(Number)
  .pipe(z.number().int().min(1).max(2 ** 31 - 1));

export const timeSeriesQuery = z.object({
  days: z.enum(['7', '30']).default('30').transform(Number),
  domainId: domainIdParam.optional(),
});

export const reputationQuery = z.object({ domainId: domainIdParam.optional() });

const COUNTS = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;

const zeroCounts = (): Counts => ({ sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 });

/** The domain the figures are limited to: a domain-bound key's own, else the requested one (which must be the team's). */
async function domainFilter(deps: ApiDeps, auth: AuthContext, requested: number | undefined): Promise<number | null> {
  if (auth.domainId !== null) return auth.domainId;
  if (requested === undefined) return null;
  const domain = await deps.db.domain.findFirst({ where: { id: requested, teamId: auth.teamId }, select: { id: true } });
  if (!domain) throw notFound('Domain not found');
  return domain.id;
}

function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return utcDay(d);
}

/** days + 1 entries, oldest first, ending today (UTC); days without counters are zeros. */
export async function emailTimeSeries(deps: ApiDeps, auth: AuthContext, q: z.infer<typeof timeSeriesQuery>) {
  const domainId = await domainFilter(deps, auth, q.domainId);
  const today = utcDay(deps.clock.now());
  const start = addDays(today, -q.days);
  const rows = await deps.db.$queryRaw<({ date: string } & Record<(typeof COUNTS)[number], bigint>)[]>(Prisma.sql`
    SELECT date, SUM(sent)::bigint AS sent, SUM(delivered)::bigint AS delivered, SUM(opened)::bigint AS opened,
           SUM(clicked)::bigint AS clicked, SUM(bounced)::bigint AS bounced, SUM(complained)::bigint AS complained
    FROM "DailyEmailUsage"
    WHERE "teamId" = ${auth.teamId} AND date >= ${start} AND date <= ${today}
      ${domainId !== null ? Prisma.sql`AND "domainId" = ${domainId}` : Prisma.empty}
    GROUP BY date`);

  const byDate = new Map(rows.map((r) => [r.date, r]));
  const totalCounts = zeroCounts();
  const result: ({ date: string } & Counts)[] = [];
  for (let i = 0; i <= q.days; i++) {
    const date = addDays(start, i);
    const row = byDate.get(date);
    const entry = { date, ...zeroCounts() };
    if (row) for (const c of COUNTS) entry[c] = Number(row[c]);
    for (const c of COUNTS) totalCounts[c] += entry[c];
    result.push(entry);
  }
  return { result, totalCounts };
}

/** All-time totals; rates are percentages of delivered mail (0 when nothing was delivered). */
export async function reputationMetrics(deps: ApiDeps, auth: AuthContext, q: z.infer<typeof reputationQuery>) {
  const domainId = await domainFilter(deps, auth, q.domainId);
  const [row] = await deps.db.$queryRaw<{ delivered: bigint; hardBounced: bigint; complained: bigint }[]>(Prisma.sql`
    SELECT COALESCE(SUM(delivered), 0)::bigint AS delivered, COALESCE(SUM("hardBounced"), 0)::bigint AS "hardBounced",
           COALESCE(SUM(complained), 0)::bigint AS complained
    FROM "CumulatedMetrics"
    WHERE "teamId" = ${auth.teamId} ${domainId !== null ? Prisma.sql`AND "domainId" = ${domainId}` : Prisma.empty}`);
  const delivered = Number(row.delivered);
  const hardBounced = Number(row.hardBounced);
  const complained = Number(row.complained);
  return {
    delivered,
    hardBounced,
    complained,
    bounceRate: delivered > 0 ? (hardBounced / delivered) * 100 : 0,
    complaintRate: delivered > 0 ? (complained / delivered) * 100 : 0,
  };
}
