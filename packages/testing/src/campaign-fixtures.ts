import type { Db } from '@mailrail/platform/db/client';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { newId } from '@mailrail/platform/ids';

// Test data for campaigns: a contact book filled in one SQL statement per kind of contact.

export interface SeededBook {
  id: string;
}

/**
 * A book with `subscribed` contacts s<i>@<domain>, `unsubscribed` ones u<i>@ (reason UNSUBSCRIBED)
 * and `pending` double opt-in ones p<i>@ (subscribed = false, no reason). Subscribed contacts get
 * firstName "First<i>" and properties {"Company": "Co<i>"} on even i only.
 */
export async function seedContactBook(
  db: Db,
  teamId: number,
  counts: { subscribed: number; unsubscribed?: number; pending?: number },
  opts: { domain?: string; variables?: string[] } = {},
): Promise<SeededBook> {
  const id = newId();
  const domain = opts.domain ?? 'people.test';
  await db.contactBook.create({ data: { id, teamId, name: `Book ${id}`, variables: opts.variables ?? [] } });
  const insert = (prefix: string, n: number, subscribed: boolean, reason: string | null) =>
    n > 0
      ? prismaExecutor(db).execute(
          `INSERT INTO "Contact" (id, "contactBookId", email, "firstName", properties, subscribed, "unsubscribeReason", "createdAt", "updatedAt")
           SELECT $1 || '_' || $5::text || lpad(i::text, 7, '0'), $1, $5::text || i || '@' || $6::text, 'First' || i,
                  CASE WHEN i % 2 = 0 THEN jsonb_build_object('Company', 'Co' || i) ELSE '{}'::jsonb END,
                  $3, $4::"UnsubscribeReason", now(), now()
             FROM generate_series(1, $2::int) AS i`,
          [id, n, subscribed, reason, prefix, domain],
        )
      : 0;
  await insert('s', counts.subscribed, true, null);
  await insert('u', counts.unsubscribed ?? 0, false, 'UNSUBSCRIBED');
  await insert('p', counts.pending ?? 0, false, null);
  return { id };
}

export const CAMPAIGN_TEST_HTML =
  '<p>Hi {{firstName}} from {{Company,fallback=nowhere}}</p><p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p>';

/** A SCHEDULED campaign row, as the API writes it. */
export async function insertScheduledCampaign(
  db: Db,
  c: {
    teamId: number;
    domainId: number;
    contactBookId: string;
    from: string;
    scheduledAt: Date;
    batchSize?: number;
    batchWindowMinutes?: number;
    ramp?: { start: number; factor: number };
    html?: string;
  },
): Promise<string> {
  const id = newId();
  await db.campaign.create({
    data: {
      id,
      teamId: c.teamId,
      domainId: c.domainId,
      name: 'Test campaign',
      from: c.from,
      subject: 'Hello {{firstName,fallback=there}}',
      contactBookId: c.contactBookId,
      html: c.html ?? CAMPAIGN_TEST_HTML,
      status: 'SCHEDULED',
      scheduledAt: c.scheduledAt,
      batchSize: c.batchSize ?? 500,
      batchWindowMinutes: c.batchWindowMinutes ?? 0,
      rampStart: c.ramp?.start ?? null,
      rampFactor: c.ramp?.factor ?? null,
    },
  });
  return id;
}
