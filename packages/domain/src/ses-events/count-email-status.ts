import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

// One bit of Email.countedFlags per counter: a counter moves at most once per email, whichever
// path (the worker seeing SES accept the message, or the SES Send event) gets there first.
export const COUNTED_BITS = {
  sent: 1,
  delivered: 2,
  opened: 4,
  clicked: 8,
  bounced: 16,
  hardBounced: 32,
  complained: 64,
} as const;

type Counter = keyof typeof COUNTED_BITS;
const COUNTERS = Object.keys(COUNTED_BITS) as Counter[];

export type CountedStatus = 'SENT' | 'DELIVERED' | 'OPENED' | 'CLICKED' | 'BOUNCED' | 'COMPLAINED';

const COUNTER_OF: Record<CountedStatus, Counter> = {
  SENT: 'sent',
  DELIVERED: 'delivered',
  OPENED: 'opened',
  CLICKED: 'clicked',
  BOUNCED: 'bounced',
  COMPLAINED: 'complained',
};

export function isCountedStatus(status: string): status is CountedStatus {
  return status in COUNTER_OF;
}

export interface CountableEmail {
  id: string;
  teamId: number;
  domainId: number | null;
  campaignId: string | null;
}

/** UTC calendar day of an instant, as DailyEmailUsage stores it. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * Adds one email's status to the daily counters (and the all-time reputation totals and the
 * campaign's counters) unless it was counted before. Call it inside the transaction that records
 * the status: the flag bit and the counters commit or roll back together.
 * Returns the counters that moved (empty when everything was already counted).
 */
export async function countEmailStatus(
  tx: SqlExecutor,
  email: CountableEmail,
  status: CountedStatus,
  opts: { hardBounce?: boolean; at?: Date } = {},
): Promise<Counter[]> {
  let bits: number = COUNTED_BITS[COUNTER_OF[status]];
  if (status === 'BOUNCED' && opts.hardBounce) bits |= COUNTED_BITS.hardBounced;

  const day = utcDay(opts.at ?? new Date());
  const domainId = email.domainId ?? 0;
  const type = email.campaignId ? 'MARKETING' : 'TRANSACTIONAL';
  // Our own constants, inlined as SQL literals.
  const b = COUNTED_BITS;
  const hasTotals = COUNTED_BITS.delivered | COUNTED_BITS.hardBounced | COUNTED_BITS.complained;
  // One statement: set the bits under the email's row lock, and add the bits that were not set
  // yet to the daily row, the all-time totals and the campaign. The shared counter rows are then
  // locked only from this statement to the commit. Data-modifying CTEs all run; each does nothing
  // when `fresh` is empty (everything was counted before).
  const rows = await tx.query<{ newBits: number }>(
    `WITH before AS (SELECT "countedFlags" AS flags FROM "Email" WHERE id = $1 FOR UPDATE),
    fresh AS (
      UPDATE "Email" e SET "countedFlags" = e."countedFlags" | $2::int
      FROM before
      WHERE e.id = $1 AND (before.flags & $2::int) <> $2::int
      RETURNING ($2::int & ~before.flags) AS nb
    ),
    daily AS (
      INSERT INTO "DailyEmailUsage" ("teamId", "domainId", "date", "type", sent, delivered, opened, clicked, bounced, "hardBounced", complained, "updatedAt")
      SELECT $3::int, $4::int, $5::text, $6::"EmailUsageType",
             (nb & ${b.sent} > 0)::int, (nb & ${b.delivered} > 0)::int, (nb & ${b.opened} > 0)::int, (nb & ${b.clicked} > 0)::int,
             (nb & ${b.bounced} > 0)::int, (nb & ${b.hardBounced} > 0)::int, (nb & ${b.complained} > 0)::int, now()
      FROM fresh
      ON CONFLICT ("teamId", "domainId", "date", "type") DO UPDATE SET
        sent = "DailyEmailUsage".sent + EXCLUDED.sent,
        delivered = "DailyEmailUsage".delivered + EXCLUDED.delivered,
        opened = "DailyEmailUsage".opened + EXCLUDED.opened,
        clicked = "DailyEmailUsage".clicked + EXCLUDED.clicked,
        bounced = "DailyEmailUsage".bounced + EXCLUDED.bounced,
        "hardBounced" = "DailyEmailUsage"."hardBounced" + EXCLUDED."hardBounced",
        complained = "DailyEmailUsage".complained + EXCLUDED.complained,
        "updatedAt" = now()
    ),
    cumulated AS (
      INSERT INTO "CumulatedMetrics" ("teamId", "domainId", delivered, "hardBounced", complained, "updatedAt")
      SELECT $3::int, $4::int, (nb & ${b.delivered} > 0)::int, (nb & ${b.hardBounced} > 0)::int, (nb & ${b.complained} > 0)::int, now()
      FROM fresh WHERE nb & ${hasTotals} <> 0
      ON CONFLICT ("teamId", "domainId") DO UPDATE SET
        delivered = "CumulatedMetrics".delivered + EXCLUDED.delivered,
        "hardBounced" = "CumulatedMetrics"."hardBounced" + EXCLUDED."hardBounced",
        complained = "CumulatedMetrics".complained + EXCLUDED.complained,
        "updatedAt" = now()
    ),
    campaign AS (
      -- Campaign.sent is not here: the campaign engine counts it when a recipient settles
      -- (recordOutcomes), and adding the SES Send event too counted every recipient twice.
      UPDATE "Campaign" c SET
        delivered = c.delivered + (nb & ${b.delivered} > 0)::int,
        opened = c.opened + (nb & ${b.opened} > 0)::int, clicked = c.clicked + (nb & ${b.clicked} > 0)::int,
        bounced = c.bounced + (nb & ${b.bounced} > 0)::int, "hardBounced" = c."hardBounced" + (nb & ${b.hardBounced} > 0)::int,
        complained = c.complained + (nb & ${b.complained} > 0)::int, "updatedAt" = now()
      FROM fresh WHERE c.id = $7::text
    )
    SELECT nb AS "newBits" FROM fresh`,
    [email.id, bits, email.teamId, domainId, day, type, email.campaignId],
  );
  const newBits = rows[0]?.newBits ?? 0;
  const moved = COUNTERS.filter((c) => newBits & COUNTED_BITS[c]);
  return moved;
}
