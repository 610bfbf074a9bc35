import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { COUNTED_BITS } from './count-email-status';

// The counters are written in batches: countEmailStatus appends one "EmailCounterDelta" row per
// email status counted (in the event's own transaction), and foldCounterDeltas adds a batch of
// them to DailyEmailUsage, CumulatedMetrics and Campaign and deletes them, in one statement.
// Reads add the deltas not folded yet, so the totals they answer are exact at every moment.

type Counter = keyof typeof COUNTED_BITS;

/** `count(*) FILTER (...)::int AS <counter>` for each counter: the sum of a set of delta rows. */
export function deltaSumsSql(counters: readonly Counter[], alias = ''): string {
  const bits = alias ? `${alias}.bits` : 'bits';
  // Our own constants, inlined as SQL literals.
  return counters.map((c) => `count(*) FILTER (WHERE ${bits} & ${COUNTED_BITS[c]} <> 0)::int AS "${c}"`).join(', ');
}

const DAILY: Counter[] = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'hardBounced', 'complained'];
/** The all-time totals behind the reputation metrics: CumulatedMetrics' counters. */
export const CUMULATED_COUNTERS: Counter[] = ['delivered', 'hardBounced', 'complained'];
// Campaign.sent is not here: the campaign engine counts it when a recipient settles
// (recordOutcomes), and adding the SES Send event too counted every recipient twice.
const CAMPAIGN: Counter[] = ['delivered', 'opened', 'clicked', 'bounced', 'hardBounced', 'complained'];
const CUMULATED_BITS = CUMULATED_COUNTERS.reduce((b, c) => b | COUNTED_BITS[c], 0);

const addEach = (table: string, counters: Counter[]) => counters.map((c) => `"${c}" = ${table}."${c}" + EXCLUDED."${c}"`).join(', ');
const col = (counters: Counter[]) => counters.map((c) => `"${c}"`).join(', ');

// One fold at a time (a transaction-scoped lock, so it also holds behind PgBouncer in transaction
// mode): two folds would lock the same counter rows in different orders. A fold that finds the
// lock taken does nothing; the one holding it is folding the same rows.
const FOLD_LOCK = 0x6d_72_63_6e_74; // "mrcnt"

/**
 * Adds up to `batch` pending deltas (oldest first) to the counters and deletes them, in one
 * statement: they move together or not at all, so a crash loses and doubles nothing. Deltas of a
 * deleted team are dropped; those of a deleted campaign still count for the team.
 * Answers how many deltas were folded (0 also when another fold holds the lock).
 */
export async function foldCounterDeltasOnce(sql: SqlExecutor, batch: number): Promise<number> {
  const [row] = await sql.query<{ folded: number }>(
    `WITH lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(${FOLD_LOCK}) AS got),
    moved AS (
      DELETE FROM "EmailCounterDelta" WHERE id IN (
        SELECT id FROM "EmailCounterDelta" WHERE (SELECT got FROM lock) ORDER BY id LIMIT $1::int)
      RETURNING "teamId", "domainId", date, type, "campaignId", bits
    ),
    live AS (SELECT m.* FROM moved m JOIN "Team" t ON t.id = m."teamId"),
    daily AS (
      INSERT INTO "DailyEmailUsage" ("teamId", "domainId", date, type, ${col(DAILY)}, "updatedAt")
      SELECT "teamId", "domainId", date, type, ${deltaSumsSql(DAILY)}, now()
      FROM live GROUP BY "teamId", "domainId", date, type ORDER BY "teamId", "domainId", date, type
      ON CONFLICT ("teamId", "domainId", "date", "type") DO UPDATE SET ${addEach('"DailyEmailUsage"', DAILY)}, "updatedAt" = now()
    ),
    cumulated AS (
      INSERT INTO "CumulatedMetrics" ("teamId", "domainId", ${col(CUMULATED_COUNTERS)}, "updatedAt")
      SELECT "teamId", "domainId", ${deltaSumsSql(CUMULATED_COUNTERS)}, now()
      FROM live WHERE bits & ${CUMULATED_BITS} <> 0 GROUP BY "teamId", "domainId" ORDER BY "teamId", "domainId"
      ON CONFLICT ("teamId", "domainId") DO UPDATE SET ${addEach('"CumulatedMetrics"', CUMULATED_COUNTERS)}, "updatedAt" = now()
    ),
    campaign AS (
      UPDATE "Campaign" c SET ${CAMPAIGN.map((k) => `"${k}" = c."${k}" + s."${k}"`).join(', ')}, "updatedAt" = now()
      FROM (SELECT "campaignId", ${deltaSumsSql(CAMPAIGN)} FROM live WHERE "campaignId" IS NOT NULL GROUP BY "campaignId") s
      WHERE c.id = s."campaignId"
    )
    SELECT count(*)::int AS folded FROM moved`,
    [batch],
  );
  return row?.folded ?? 0;
}

/**
 * Folds until fewer than `batch` deltas were left (each batch its own transaction), or `maxBatches`
 * were folded: the periodic run stops there and the next one goes on, so a flood of one team's
 * events cannot hold the maintenance worker.
 */
export async function foldCounterDeltas(sql: SqlExecutor, batch: number, maxBatches = Infinity): Promise<{ folded: number }> {
  let folded = 0;
  for (let done = 0; done < maxBatches; done++) {
    const n = await foldCounterDeltasOnce(sql, batch);
    folded += n;
    if (n < batch) break;
  }
  return { folded };
}

export interface CampaignCounters {
  delivered: number;
  opened: number;
  clicked: number;
  bounced: number;
  hardBounced: number;
  complained: number;
}

/** The campaign counters not folded yet, by campaign id (campaigns without pending deltas are absent). */
export async function pendingCampaignCounters(sql: SqlExecutor, campaignIds: string[]): Promise<Map<string, CampaignCounters>> {
  if (campaignIds.length === 0) return new Map();
  const rows = await sql.query<CampaignCounters & { campaignId: string }>(
    `SELECT "campaignId", ${deltaSumsSql(CAMPAIGN)} FROM "EmailCounterDelta" WHERE "campaignId" = ANY($1::text[]) GROUP BY "campaignId"`,
    [campaignIds],
  );
  return new Map(rows.map(({ campaignId, ...counts }) => [campaignId, counts]));
}

/** A campaign row's counters with its pending deltas added. */
export function withPendingCounters<C extends CampaignCounters & { id: string }>(c: C, pending: Map<string, CampaignCounters>): C {
  const p = pending.get(c.id);
  if (!p) return c;
  const added = { ...c };
  for (const k of CAMPAIGN as (keyof CampaignCounters)[]) added[k] = c[k] + p[k];
  return added;
}
