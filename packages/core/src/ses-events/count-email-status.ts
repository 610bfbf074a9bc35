import { Prisma } from '../db/generated/client';
import type { Db } from '../db/client';

/** A Prisma client or interactive-transaction client: everything here runs raw SQL. */
export type SqlClient = Pick<Db, '$queryRaw' | '$executeRaw'> | Prisma.TransactionClient;

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
  tx: SqlClient,
  email: CountableEmail,
  status: CountedStatus,
  opts: { hardBounce?: boolean; at?: Date } = {},
): Promise<Counter[]> {
  let bits: number = COUNTED_BITS[COUNTER_OF[status]];
  if (status === 'BOUNCED' && opts.hardBounce) bits |= COUNTED_BITS.hardBounced;

  // Sets the bits and reports which were already set, in one statement under the row lock.
  const rows = await tx.$queryRaw<{ before: number }[]>(Prisma.sql`
    WITH before AS (SELECT "countedFlags" AS flags FROM "Email" WHERE id = ${email.id} FOR UPDATE)
    UPDATE "Email" e SET "countedFlags" = e."countedFlags" | ${bits}::int
    FROM before
    WHERE e.id = ${email.id} AND (before.flags & ${bits}::int) <> ${bits}::int
    RETURNING before.flags AS before`);
  if (rows.length === 0) return [];
  const newBits = bits & ~rows[0].before;
  const moved = COUNTERS.filter((c) => newBits & COUNTED_BITS[c]);
  const inc = (c: Counter) => (newBits & COUNTED_BITS[c] ? 1 : 0);

  const day = utcDay(opts.at ?? new Date());
  const domainId = email.domainId ?? 0;
  const type = email.campaignId ? 'MARKETING' : 'TRANSACTIONAL';
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO "DailyEmailUsage" ("teamId", "domainId", "date", "type", sent, delivered, opened, clicked, bounced, "hardBounced", complained, "updatedAt")
    VALUES (${email.teamId}, ${domainId}, ${day}, ${type}::"EmailUsageType", ${inc('sent')}, ${inc('delivered')}, ${inc('opened')},
            ${inc('clicked')}, ${inc('bounced')}, ${inc('hardBounced')}, ${inc('complained')}, now())
    ON CONFLICT ("teamId", "domainId", "date", "type") DO UPDATE SET
      sent = "DailyEmailUsage".sent + EXCLUDED.sent,
      delivered = "DailyEmailUsage".delivered + EXCLUDED.delivered,
      opened = "DailyEmailUsage".opened + EXCLUDED.opened,
      clicked = "DailyEmailUsage".clicked + EXCLUDED.clicked,
      bounced = "DailyEmailUsage".bounced + EXCLUDED.bounced,
      "hardBounced" = "DailyEmailUsage"."hardBounced" + EXCLUDED."hardBounced",
      complained = "DailyEmailUsage".complained + EXCLUDED.complained,
      "updatedAt" = now()`);

  if (inc('delivered') || inc('hardBounced') || inc('complained')) {
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO "CumulatedMetrics" ("teamId", "domainId", delivered, "hardBounced", complained, "updatedAt")
      VALUES (${email.teamId}, ${domainId}, ${inc('delivered')}, ${inc('hardBounced')}, ${inc('complained')}, now())
      ON CONFLICT ("teamId", "domainId") DO UPDATE SET
        delivered = "CumulatedMetrics".delivered + EXCLUDED.delivered,
        "hardBounced" = "CumulatedMetrics"."hardBounced" + EXCLUDED."hardBounced",
        complained = "CumulatedMetrics".complained + EXCLUDED.complained,
        "updatedAt" = now()`);
  }

  if (email.campaignId) {
    await tx.$executeRaw(Prisma.sql`
      UPDATE "Campaign" SET
        sent = sent + ${inc('sent')}, delivered = delivered + ${inc('delivered')}, opened = opened + ${inc('opened')},
        clicked = clicked + ${inc('clicked')}, bounced = bounced + ${inc('bounced')},
        "hardBounced" = "hardBounced" + ${inc('hardBounced')}, complained = complained + ${inc('complained')},
        "updatedAt" = now()
      WHERE id = ${email.campaignId}`);
  }
  return moved;
}
