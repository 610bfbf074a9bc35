import { z } from 'zod';
import { isEmailAddress, MAX_STORED_ADDRESS_LENGTH, normaliseAddress } from '@mailrail/domain/emails/address';
import type { RecipientType } from '@mailrail/domain/emails/recipient-outcomes';
import { explainEvent, explainSuppression, type Explanation } from '@mailrail/domain/deliverability/explanations';
import { explainedRecipientOutcomes } from '@mailrail/domain/deliverability/recipient-explanations';
import { emailIdCreatedWithinSql } from '@mailrail/domain/sql/email-id-range';
import type { EmailStatus, SuppressionReason, UnsubscribeReason } from '@mailrail/platform/db/generated/enums';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { intString } from '../http/query';
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from '../http/created-at-cursor';

// "Why didn't this arrive?" for one address (docs/deliverability.md): its suppression entry, its
// contact in every book of the team, and the latest emails and campaign messages to it, each with
// the address's own outcome and the explanation of the event that decided it. Served to API keys
// at GET /api/v1/addresses/{address} and to the dashboard through the same router.

export const addressParam = z.object({
  address: z
    .string()
    .max(MAX_STORED_ADDRESS_LENGTH, { message: `must be at most ${MAX_STORED_ADDRESS_LENGTH} characters`, abort: true })
    .transform(normaliseAddress)
    .refine(isEmailAddress, 'must be an email address')
    .describe('The address, `addr@domain` (case does not matter); URL-encoded'),
});

const MAX_CURSOR_LENGTH = 200;

export const addressReportQuery = z.object({
  limit: intString(1, 50).default(20).describe('Messages per page (at most 50)'),
  cursor: z.string().max(MAX_CURSOR_LENGTH).optional().describe("`nextCursor` of the previous page: the messages older than that page's"),
});

export interface AddressMessage {
  emailId: string;
  subject: string;
  from: string;
  createdAt: Date;
  campaign: { id: string; name: string } | null;
  /** How the address was given: to, cc or bcc. */
  type: RecipientType;
  /** This address's outcome (the email's status vocabulary). */
  status: EmailStatus;
  /** When the event that decided it happened; null when none did (queued, or not sent). */
  statusAt: Date | null;
  explanation: Explanation | null;
}

interface EmailRow {
  id: string;
  subject: string;
  from: string;
  createdAt: Date;
  to: string[];
  cc: string[];
  bcc: string[];
  latestStatus: EmailStatus;
  skippedRecipients: unknown;
  campaignId: string | null;
  campaignName: string | null;
}

interface EventRow {
  emailId: string;
  status: EmailStatus;
  data: unknown;
  createdAt: Date;
}

// Opens and clicks belong to the message, not to a recipient (recipient-outcomes.ts): leaving them
// out bounds what a much-clicked email costs here and changes no outcome.
const OUTCOME_EVENTS = `status NOT IN ('OPENED', 'CLICKED')`;

/** The address's latest messages, newest first, keyset-paged. A domain-bound key sees its domain's only. */
async function messagesTo(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, address: string, q: z.infer<typeof addressReportQuery>) {
  const params: unknown[] = [auth.teamId, [address]];
  const p = (v: unknown) => `$${params.push(v)}`;
  const where = [`e."teamId" = $1`, `e."recipientAddresses" @> $2::text[]`];
  if (auth.domainId !== null) where.push(`e."domainId" = ${p(auth.domainId)}`);
  const cursor = q.cursor ? decodeCreatedAtCursor(q.cursor) : null;
  if (cursor) {
    where.push(`(e."createdAt", e.id) < (${p(cursor.createdAt)}, ${p(cursor.id)})`);
    // Only the partitions of the days at or before the cursor's.
    where.push(emailIdCreatedWithinSql('e.id', { from: null, before: new Date(cursor.createdAt.getTime() + 1) }, p));
  }
  const sql = prismaExecutor(deps.db);
  const rows = await sql.query<EmailRow>(
    `SELECT e.id, e.subject, e."from", e."createdAt", e."to", e.cc, e.bcc, e."latestStatus", e."skippedRecipients",
            e."campaignId", c.name AS "campaignName"
       FROM "Email" e LEFT JOIN "Campaign" c ON c.id = e."campaignId" AND c."teamId" = e."teamId"
      WHERE ${where.join(' AND ')}
      ORDER BY e."createdAt" DESC, e.id DESC
      LIMIT ${p(q.limit + 1)}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const events = page.length
    ? await sql.query<EventRow>(
        `SELECT "emailId", status, data, "createdAt" FROM "EmailEvent"
          WHERE "emailId" = ANY($1::text[]) AND ${OUTCOME_EVENTS} ORDER BY "createdAt", id`,
        [page.map((r) => r.id)],
      )
    : [];
  const byEmail = new Map<string, EventRow[]>();
  for (const e of events) {
    const list = byEmail.get(e.emailId);
    if (list) list.push(e);
    else byEmail.set(e.emailId, [e]);
  }

  const messages: AddressMessage[] = page.flatMap((email) => {
    const outcome = explainedRecipientOutcomes(email, byEmail.get(email.id) ?? []).find((r) => normaliseAddress(r.email) === address);
    if (!outcome) return [];
    return [
      {
        emailId: email.id,
        subject: email.subject,
        from: email.from,
        createdAt: email.createdAt,
        campaign: email.campaignId && email.campaignName ? { id: email.campaignId, name: email.campaignName } : null,
        type: outcome.type,
        status: outcome.status,
        statusAt: outcome.statusAt,
        explanation: outcome.explanation,
      },
    ];
  });
  const last = page[page.length - 1];
  return { messages, nextCursor: rows.length > q.limit && last ? encodeCreatedAtCursor(last) : null };
}

/**
 * The team's suppression entry for the address, explained by the bounce or complaint that put it
 * there when that email is still in the log (and visible to a domain-bound key).
 */
async function suppressionOf(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, address: string) {
  const entry = await deps.db.suppression.findUnique({
    where: { teamId_email: { teamId: auth.teamId, email: address } },
    select: { email: true, reason: true, source: true, createdAt: true, updatedAt: true },
  });
  if (!entry) return null;
  // The source of an automatic suppression is the id of the email that bounced or was complained about.
  const [cause] = entry.source
    ? await prismaExecutor(deps.db).query<{ emailId: string; status: EmailStatus; data: unknown }>(
        `SELECT ev."emailId", ev.status, ev.data FROM "EmailEvent" ev
           JOIN "Email" e ON e.id = ev."emailId"
          WHERE ev."emailId" = $1 AND e.id = $1 AND e."teamId" = $2 AND ($3::int IS NULL OR e."domainId" = $3)
            AND ev.status = ANY($4::"EmailStatus"[])
          ORDER BY ev."createdAt" DESC, ev.id DESC LIMIT 1`,
        [entry.source, auth.teamId, auth.domainId, entry.reason === 'COMPLAINT' ? ['COMPLAINED'] : ['BOUNCED']],
      )
    : [];
  const because = cause ? explainEvent(cause.status, cause.data, address) : null;
  return {
    reason: entry.reason as SuppressionReason,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    causedByEmailId: cause?.emailId ?? null,
    explanation: explainSuppression(entry.reason),
    cause: because,
  };
}

/** The address's contact in every contact book of the team (books are team-wide, as for GET /contactBooks). */
async function contactsOf(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, address: string) {
  const rows = await prismaExecutor(deps.db).query<{
    contactBookId: string;
    contactBookName: string;
    contactId: string;
    subscribed: boolean;
    unsubscribeReason: UnsubscribeReason | null;
    createdAt: Date;
    updatedAt: Date;
  }>(
    `SELECT b.id AS "contactBookId", b.name AS "contactBookName", c.id AS "contactId", c.subscribed, c."unsubscribeReason",
            c."createdAt", c."updatedAt"
       FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE c.email = $1 AND b."teamId" = $2
      ORDER BY b.name, b.id`,
    [address, auth.teamId],
  );
  return rows.map((r) => ({
    ...r,
    // Pending double opt-in is subscribed = false with no reason (schema.prisma, Contact).
    state: r.subscribed ? ('SUBSCRIBED' as const) : r.unsubscribeReason ? ('UNSUBSCRIBED' as const) : ('PENDING_CONFIRMATION' as const),
  }));
}

/** Everything the team knows about why mail to `address` did or did not arrive. */
export async function addressReport(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, address: string, q: z.infer<typeof addressReportQuery>) {
  const [suppression, contacts, messages] = await Promise.all([
    suppressionOf(deps, auth, address),
    contactsOf(deps, auth, address),
    messagesTo(deps, auth, address, q),
  ]);
  return { address, suppression, contacts, ...messages };
}
