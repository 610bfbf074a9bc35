import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { normaliseAddress } from '../../emails/address';

// What the engagement segment conditions read (segment-sql.ts, docs/audience.md "Email activity"),
// written by the SES event that reports the activity, in that event's transaction:
// - "EmailActivity": per team and recipient address, the latest delivery, open and click. An open
//   or a click is the message's (SES cannot say which recipient opened), so it counts for every
//   recipient the email was sent to; a delivery counts for the recipients SES names in it. A
//   click is also an open (a reader with images blocked clicks without a recorded open).
// - "CampaignEmail".openedAt / clickedAt: the first open and click of a campaign's recipient.
// The rows are small and keyed for the conditions: a contact's test is one primary-key probe, a
// whole book's one hash join, whatever the size of the email log.

export type ActivityStatus = 'DELIVERED' | 'OPENED' | 'CLICKED';

export const isActivityStatus = (status: string | null | undefined): status is ActivityStatus =>
  status === 'DELIVERED' || status === 'OPENED' || status === 'CLICKED';

interface ActivityEmail {
  id: string;
  teamId: number;
  campaignId: string | null;
}

const stringList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/**
 * Records one delivery, open or click of `email` at `occurredAt`. `detail` is the SES event's
 * detail (a delivery's `recipients`). Out-of-order and repeated events converge: the latest time
 * per address, the first per campaign recipient.
 */
export async function recordEmailActivity(
  tx: SqlExecutor,
  email: ActivityEmail,
  status: ActivityStatus,
  occurredAt: Date,
  detail: Record<string, unknown> = {},
): Promise<void> {
  // Arrays may be NULL in rows written before their columns had defaults.
  const [row] = await tx.query<{ to: string[] | null; cc: string[] | null; bcc: string[] | null }>(
    `SELECT "to", cc, bcc FROM "Email" WHERE id = $1`,
    [email.id],
  );
  if (!row) return;
  let addresses = [...new Set([...(row.to ?? []), ...(row.cc ?? []), ...(row.bcc ?? [])].map(normaliseAddress))];
  const named = stringList(detail.recipients).map(normaliseAddress);
  if (status === 'DELIVERED' && named.length) addresses = addresses.filter((a) => named.includes(a));
  // Sorted: concurrent events of emails sharing recipients lock the rows in one order.
  addresses.sort();
  const columns =
    status === 'DELIVERED' ? ['"lastDeliveredAt"'] : status === 'OPENED' ? ['"lastOpenedAt"'] : ['"lastOpenedAt"', '"lastClickedAt"'];
  const newer = columns.map((c) => `"EmailActivity".${c} IS NULL OR "EmailActivity".${c} < EXCLUDED.${c}`).join(' OR ');
  const set = columns.map((c) => `${c} = GREATEST("EmailActivity".${c}, EXCLUDED.${c})`).join(', ');
  if (addresses.length)
    await tx.execute(
      `INSERT INTO "EmailActivity" ("teamId", address, ${columns.join(', ')})
       SELECT $1::int, a, ${columns.map(() => '$3::timestamptz').join(', ')} FROM unnest($2::text[]) AS a ORDER BY a
       ON CONFLICT ("teamId", address) DO UPDATE SET ${set} WHERE ${newer}`,
      [email.teamId, addresses, occurredAt],
    );
  if (email.campaignId && status !== 'DELIVERED') {
    const first = status === 'OPENED' ? ['"openedAt"'] : ['"openedAt"', '"clickedAt"'];
    await tx.execute(
      `UPDATE "CampaignEmail" SET ${first.map((c) => `${c} = LEAST(coalesce(${c}, $2::timestamptz), $2::timestamptz)`).join(', ')}
        WHERE "emailId" = $1 AND (${first.map((c) => `${c} IS NULL OR ${c} > $2::timestamptz`).join(' OR ')})`,
      [email.id, occurredAt],
    );
  }
}
