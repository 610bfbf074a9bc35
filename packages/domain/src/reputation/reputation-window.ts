import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { utcDay } from '../ses-events/count-email-status';
import { deltaSumsSql } from '../ses-events/counter-deltas';
import { percentOf, REPUTATION_WINDOW_DAYS } from './rates';

// Reputation over the recent window, as SES judges it (over recent sent volume, not all time):
// hard bounces and complaints over sent in the last REPUTATION_WINDOW_DAYS UTC days, from the
// daily counters plus the deltas not folded yet (never a scan of emails).

export interface WindowedReputation {
  days: number;
  /** First and last UTC day of the window (YYYY-MM-DD). */
  from: string;
  to: string;
  sent: number;
  hardBounced: number;
  complained: number;
  bounceRate: number;
  complaintRate: number;
}

const WINDOW_COUNTERS = ['sent', 'hardBounced', 'complained'] as const;
type WindowRow = { teamId: number } & Record<(typeof WINDOW_COUNTERS)[number], string | number | bigint>;

export function reputationWindowDays(now: Date): { from: string; to: string } {
  const from = new Date(now.getTime());
  from.setUTCDate(from.getUTCDate() - (REPUTATION_WINDOW_DAYS - 1));
  return { from: utcDay(from), to: utcDay(now) };
}

function toWindowed(row: WindowRow | undefined, range: { from: string; to: string }): WindowedReputation {
  const sent = Number(row?.sent ?? 0);
  const hardBounced = Number(row?.hardBounced ?? 0);
  const complained = Number(row?.complained ?? 0);
  return {
    days: REPUTATION_WINDOW_DAYS,
    ...range,
    sent,
    hardBounced,
    complained,
    bounceRate: percentOf(hardBounced, sent),
    complaintRate: percentOf(complained, sent),
  };
}

async function windowSums(sql: SqlExecutor, range: { from: string; to: string }, teamId: number | null, domainId: number | null) {
  const params: unknown[] = [range.from, range.to];
  let where = 'date >= $1 AND date <= $2';
  if (teamId !== null) where += ` AND "teamId" = $${params.push(teamId)}`;
  if (domainId !== null) where += ` AND "domainId" = $${params.push(domainId)}`;
  const cols = WINDOW_COUNTERS.map((c) => `"${c}"`).join(', ');
  return sql.query<WindowRow>(
    `SELECT "teamId", ${WINDOW_COUNTERS.map((c) => `SUM("${c}")::bigint AS "${c}"`).join(', ')}
       FROM (SELECT "teamId", ${cols} FROM "DailyEmailUsage" WHERE ${where}
             UNION ALL
             SELECT "teamId", ${deltaSumsSql(WINDOW_COUNTERS)} FROM "EmailCounterDelta" WHERE ${where} GROUP BY "teamId") counted
      GROUP BY "teamId"`,
    params,
  );
}

/** One team's windowed reputation (optionally one domain of it), ending on `now`'s UTC day. */
export async function teamReputationWindow(
  sql: SqlExecutor,
  teamId: number,
  domainId: number | null,
  now: Date,
): Promise<WindowedReputation> {
  const range = reputationWindowDays(now);
  const [row] = await windowSums(sql, range, teamId, domainId);
  return toWindowed(row, range);
}

/** Every team that sent in the window, with its windowed reputation (the alert job's input). */
export async function allTeamsReputationWindow(sql: SqlExecutor, now: Date): Promise<Map<number, WindowedReputation>> {
  const range = reputationWindowDays(now);
  const rows = await windowSums(sql, range, null, null);
  return new Map(rows.map((r) => [Number(r.teamId), toWindowed(r, range)]));
}
