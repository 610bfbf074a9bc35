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
 * Counts one email's status (daily counters, all-time reputation totals, the campaign's counters)
 * unless it was counted before. Call it inside the transaction that records the status: the flag
 * bits and the counter delta commit or roll back together, so a crash neither loses nor doubles a
 * count. The counters themselves move later, when foldCounterDeltas adds the deltas up
 * (counter-deltas.ts); reads add the deltas not folded yet.
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
  // One statement: set the bits under the email's row lock and append the bits that were not set
  // yet as one delta row. No row shared by the team is locked: every event of a team used to
  // update the same daily row and queue on its lock until commit. FOR NO KEY UPDATE, the lock the
  // UPDATE takes anyway: FOR UPDATE also waits for the KEY SHARE lock another event of the same
  // email holds from inserting its EmailEvent row, and two such events deadlocked.
  const rows = await tx.query<{ newBits: number }>(
    `WITH before AS (SELECT "countedFlags" AS flags FROM "Email" WHERE id = $1 FOR NO KEY UPDATE),
    fresh AS (
      UPDATE "Email" e SET "countedFlags" = e."countedFlags" | $2::int
      FROM before
      WHERE e.id = $1 AND (before.flags & $2::int) <> $2::int
      RETURNING ($2::int & ~before.flags) AS nb
    ),
    delta AS (
      INSERT INTO "EmailCounterDelta" ("teamId", "domainId", date, type, "campaignId", bits)
      SELECT $3::int, $4::int, $5::text, $6::"EmailUsageType", $7::text, nb FROM fresh
    )
    SELECT nb AS "newBits" FROM fresh`,
    [email.id, bits, email.teamId, domainId, day, type, email.campaignId],
  );
  const newBits = rows[0]?.newBits ?? 0;
  const moved = COUNTERS.filter((c) => newBits & COUNTED_BITS[c]);
  return moved;
}
