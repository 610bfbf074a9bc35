import { findVerifiedSenderDomain } from '@mailrail/domain/domains/sender-domain';
import { parseAddress } from '@mailrail/domain/emails/address';
import { buildDoubleOptInUrl } from '@mailrail/domain/audience/links';
import { escapeHtml } from '@mailrail/domain/render/template';
import { insertAndEnqueueEmails, type EmailDraft } from '@mailrail/domain/emails/create-emails';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { renderEditorDocument, toEditorDocument } from '@mailrail/domain/audience/editor-document';
import { type ContactBook } from '@mailrail/platform/db/generated/client';
import type { ApiDeps } from '../deps';
import { DEFAULT_DOUBLE_OPT_IN_CONTENT, DEFAULT_DOUBLE_OPT_IN_SUBJECT } from '../contact-books/double-opt-in-settings';

/** At most one confirmation per contact per hour, however often the contact is re-submitted. */
export const DOUBLE_OPT_IN_RESEND_AFTER_MS = 3600 * 1000;

const PLACEHOLDER = /\{\{\s*(email|firstName|lastName|doubleOptInUrl)\s*\}\}/gi;

interface ConfirmationValues {
  email: string;
  firstName: string;
  lastName: string;
  doubleOptInUrl: string;
}

function fill(template: string, values: ConfirmationValues, escape: (s: string) => string): string {
  return template.replace(PLACEHOLDER, (_m, key: string) => {
    const k = (Object.keys(values) as (keyof ConfirmationValues)[]).find((name) => name.toLowerCase() === key.toLowerCase())!;
    return escape(values[k]);
  });
}

/** Subject and HTML of one confirmation: editor JSON is rendered, any other content is used as HTML. */
export function renderConfirmation(book: Pick<ContactBook, 'doubleOptInSubject' | 'doubleOptInContent'>, values: ConfirmationValues) {
  const doc = toEditorDocument(book.doubleOptInContent ?? DEFAULT_DOUBLE_OPT_IN_CONTENT)!;
  const html = renderEditorDocument(doc, { variables: { ...values } });
  return {
    subject: fill(book.doubleOptInSubject ?? DEFAULT_DOUBLE_OPT_IN_SUBJECT, values, (s) => s),
    html: fill(html, values, escapeHtml),
  };
}

/**
 * Who sends the confirmation. With a team-wide key: `doubleOptInFrom`, else
 * `hello@<oldest verified team domain>`. With a key bound to a domain, the mail never leaves from
 * another domain: `doubleOptInFrom` only when it is on the key's domain, else `hello@<key's domain>`.
 * Null when nothing (verified) can send.
 */
async function confirmationSender(deps: ApiDeps, book: ContactBook, boundDomainId: number | null) {
  if (book.doubleOptInFrom) {
    const parsed = parseAddress(book.doubleOptInFrom);
    const check = parsed ? await findVerifiedSenderDomain(deps.db, book.teamId, parsed.address, boundDomainId) : null;
    if (check?.ok) return { from: book.doubleOptInFrom, domain: check.domain };
    if (boundDomainId === null) return null;
  }
  const domain = await deps.db.domain.findFirst({
    where: { teamId: book.teamId, status: 'SUCCESS', ...(boundDomainId !== null ? { id: boundDomainId } : {}) },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return domain ? { from: `hello@${domain.name}`, domain } : null;
}

/**
 * Sends the confirmation email to pending contacts through the normal send pipeline. A contact is
 * claimed first (`doubleOptInSentAt` moved to now only if its last confirmation is older than an
 * hour), so concurrent or repeated creates send one. Failures are logged: the contact is stored
 * either way, as in useSend. `boundDomainId` is the domain of the key that added the contacts.
 */
export async function sendDoubleOptInConfirmations(
  deps: ApiDeps,
  book: ContactBook,
  contactIds: string[],
  now: Date,
  boundDomainId: number | null = null,
): Promise<number> {
  if (contactIds.length === 0) return 0;
  const sender = await confirmationSender(deps, book, boundDomainId);
  if (!sender) {
    deps.log.warn({ contactBookId: book.id }, 'double opt-in: no verified sending domain, confirmation not sent');
    return 0;
  }
  const claimed = await prismaExecutor(deps.db).query<{
    id: string;
    email: string;
    firstName: string | null;
    lastName: string | null;
    previous: Date | null;
  }>(
    `UPDATE "Contact" c SET "doubleOptInSentAt" = $2::timestamptz
     FROM (SELECT id, "doubleOptInSentAt" AS previous FROM "Contact" WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE) old
     WHERE c.id = old.id AND c.subscribed = false AND c."unsubscribeReason" IS NULL
       AND (c."doubleOptInSentAt" IS NULL OR c."doubleOptInSentAt" <= $3::timestamptz)
     RETURNING c.id, c.email, c."firstName", c."lastName", old.previous`,
    [contactIds, now, new Date(now.getTime() - DOUBLE_OPT_IN_RESEND_AFTER_MS)],
  );
  if (claimed.length === 0) return 0;

  const suppressed = new Set(
    (
      await deps.db.suppression.findMany({
        where: { teamId: book.teamId, email: { in: claimed.map((c) => c.email) } },
        select: { email: true },
      })
    ).map((s) => s.email),
  );
  const drafts: EmailDraft[] = claimed.map((c) => {
    const { subject, html } = renderConfirmation(book, {
      email: c.email,
      firstName: c.firstName ?? '',
      lastName: c.lastName ?? '',
      doubleOptInUrl: buildDoubleOptInUrl(deps.config, c.id, now),
    });
    return {
      teamId: book.teamId,
      domainId: sender.domain.id,
      region: sender.domain.region,
      // The service's own confirmation mail, not one the team sent.
      source: 'SYSTEM',
      from: sender.from,
      to: [c.email],
      subject,
      html,
      contactId: c.id,
      lane: 'transactional',
      suppressed: suppressed.has(c.email) ? { reason: 'Recipient is on the suppression list' } : null,
    };
  });
  try {
    await insertAndEnqueueEmails(deps, drafts, now);
    return drafts.length;
  } catch (err) {
    // Give the claims back so the next attempt is not held off for an hour.
    await deps.db
      .$transaction(claimed.map((c) => deps.db.contact.update({ where: { id: c.id }, data: { doubleOptInSentAt: c.previous } })))
      .catch(() => undefined);
    deps.log.error({ err, contactBookId: book.id }, 'double opt-in: confirmation emails could not be created');
    return 0;
  }
}
