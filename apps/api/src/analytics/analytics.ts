import { z } from 'zod';
import { notFound } from '@mailrail/domain/errors/api-error';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { emailIdCreatedWithinSql } from '@mailrail/domain/sql/email-id-range';
import { utcDay } from '@mailrail/domain/ses-events/count-email-status';
import { CUMULATED_COUNTERS, deltaSumsSql } from '@mailrail/domain/ses-events/counter-deltas';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { intString } from '../http/query';
import { MAX_ID_LENGTH } from '../http/limits';
import { utcDateSql } from '@mailrail/platform/db/sql/time';
import { outcomeRates } from '@mailrail/domain/reputation/rates';
import { teamReputationWindow } from '@mailrail/domain/reputation/reputation-window';

const domainIdParam = intString(1, 2 ** 31 - 1);

export const timeSeriesQuery = z.object({
  days: z.enum(['7', '30']).default('30').transform(Number),
  domainId: domainIdParam.optional(),
  campaignId: z.string().min(1).max(MAX_ID_LENGTH).optional(),
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

type DayRow = { date: string } & Record<(typeof COUNTS)[number], bigint>;

/**
 * One campaign's daily counts, from its emails' events: an email counts once per status, on the UTC
 * day of its first event of that status (the rule the daily counters follow). The daily counters
 * carry no campaign, so this reads Email (indexed by campaignId) and each email's events.
 */
async function campaignDays(deps: ApiDeps, auth: AuthContext, campaignId: string, domainId: number | null, start: string, today: string) {
  const campaign = await deps.db.campaign.findFirst({
    where: { id: campaignId, teamId: auth.teamId, ...(auth.domainId !== null ? { domainId: auth.domainId } : {}) },
    select: { id: true, createdAt: true },
  });
  if (!campaign) throw notFound('Campaign not found');
  const params: unknown[] = [auth.teamId, campaign.id, start, today];
  // A campaign's emails are created after the campaign (a day of slack for clocks): the partitions
  // of older days are skipped, on both sides of the join (the planner does not carry the range over).
  const param = (v: unknown) => `$${params.push(v)}`;
  const since = { from: new Date(campaign.createdAt.getTime() - 86_400_000) };
  const sums = COUNTS.map((c) => `COUNT(*) FILTER (WHERE status = '${c.toUpperCase()}')::bigint AS ${c}`).join(', ');
  return prismaExecutor(deps.db).query<DayRow>(
    `SELECT ${utcDateSql('first_at')} AS date, ${sums}
       FROM (SELECT ev."emailId", ev.status, MIN(ev."createdAt") AS first_at
               FROM "Email" e JOIN "EmailEvent" ev ON ev."emailId" = e.id
              WHERE e."teamId" = $1 AND e."campaignId" = $2
                AND ${emailIdCreatedWithinSql('e.id', since, param)} AND ${emailIdCreatedWithinSql('ev."emailId"', since, param)}
                AND ev.status IN ('SENT', 'DELIVERED', 'OPENED', 'CLICKED', 'BOUNCED', 'COMPLAINED')
                ${domainId !== null ? `AND e."domainId" = ${param(domainId)}` : ''}
              GROUP BY ev."emailId", ev.status) firsts
      WHERE first_at >= $3::date AND first_at < $4::date + 1
      GROUP BY 1`,
    params,
  );
}

/**
 * The daily counters with the deltas not folded yet (counter-deltas.ts) added: exact totals,
 * read in one snapshot, so a fold running meanwhile is seen wholly or not at all.
 */
async function dailyCounts(deps: ApiDeps, params: unknown[], domainId: number | null) {
  const where = `"teamId" = $1 AND date >= $2 AND date <= $3 ${domainId !== null ? `AND "domainId" = $${params.push(domainId)}` : ''}`;
  const cols = COUNTS.map((c) => `"${c}"`).join(', ');
  return prismaExecutor(deps.db).query<DayRow>(
    `SELECT date, ${COUNTS.map((c) => `SUM("${c}")::bigint AS "${c}"`).join(', ')}
       FROM (SELECT date, ${cols} FROM "DailyEmailUsage" WHERE ${where}
             UNION ALL
             SELECT date, ${deltaSumsSql(COUNTS)} FROM "EmailCounterDelta" WHERE ${where} GROUP BY date) counted
      GROUP BY date`,
    params,
  );
}

/** days + 1 entries, oldest first, ending today (UTC); days without counters are zeros. */
export async function emailTimeSeries(deps: ApiDeps, auth: AuthContext, q: z.infer<typeof timeSeriesQuery>) {
  const domainId = await domainFilter(deps, auth, q.domainId);
  const today = utcDay(deps.clock.now());
  const start = addDays(today, -q.days);
  const params: unknown[] = [auth.teamId, start, today];
  const rows =
    q.campaignId !== undefined
      ? await campaignDays(deps, auth, q.campaignId, domainId, start, today)
      : await dailyCounts(deps, params, domainId);

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
  return { result, totalCounts, totalRates: outcomeRates(totalCounts) };
}

/**
 * All-time totals, their rates in percent of delivered mail (useSend's fields, 0 when nothing was
 * delivered), and `window`: hard bounces and complaints over sent in the recent window SES judges.
 */
export async function reputationMetrics(deps: ApiDeps, auth: AuthContext, q: z.infer<typeof reputationQuery>) {
  const domainId = await domainFilter(deps, auth, q.domainId);
  const params: unknown[] = [auth.teamId];
  // Totals with the deltas not folded yet added (counter-deltas.ts).
  const where = `"teamId" = $1 ${domainId !== null ? `AND "domainId" = $${params.push(domainId)}` : ''}`;
  const [row] = await prismaExecutor(deps.db).query<{ delivered: bigint; hardBounced: bigint; complained: bigint }>(
    `SELECT COALESCE(SUM(delivered), 0)::bigint AS delivered, COALESCE(SUM("hardBounced"), 0)::bigint AS "hardBounced",
            COALESCE(SUM(complained), 0)::bigint AS complained
       FROM (SELECT delivered, "hardBounced", complained FROM "CumulatedMetrics" WHERE ${where}
             UNION ALL
             SELECT ${deltaSumsSql(CUMULATED_COUNTERS)} FROM "EmailCounterDelta" WHERE ${where}) counted`,
    params,
  );
  const delivered = Number(row.delivered);
  const hardBounced = Number(row.hardBounced);
  const complained = Number(row.complained);
  const window = await teamReputationWindow(prismaExecutor(deps.db), auth.teamId, domainId, deps.clock.now());
  return {
    delivered,
    hardBounced,
    complained,
    bounceRate: delivered > 0 ? (hardBounced / delivered) * 100 : 0,
    complaintRate: delivered > 0 ? (complained / delivered) * 100 : 0,
    window,
  };
}
