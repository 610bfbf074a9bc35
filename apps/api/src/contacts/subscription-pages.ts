import express, { Router, type Request, type Response } from 'express';
import { contactEventsInsertSql } from '@mailrail/domain/sql/contact';
import { contactEventsSql } from '@mailrail/domain/events/contact-events';
import { escapeHtml } from '@mailrail/domain/render/template';
import { emailIdPrefixAt, newId } from '@mailrail/platform/ids';
import { unsubscribeContact } from '@mailrail/domain/audience/unsubscribe';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { verifyDoubleOptInLink, verifyUnsubscribeLink } from '@mailrail/domain/audience/links';
import { type Db } from '@mailrail/platform/db/client';
import type { ApiDeps } from '../deps';

// Public pages reached from links in emails, mounted outside /api/v1 (no API key). Mail scanners
// open links before people do, so a GET only shows a page with a button; the POST acts. The signed
// link is the authority, so there is nothing else to forge.

function page(res: Response, status: number, title: string, body: string): void {
  res
    .status(status)
    .set({
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Robots-Tag': 'noindex',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
    })
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
        `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head>` +
        `<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#111827;max-width:480px;margin:64px auto;padding:0 24px">` +
        `<h1 style="font-size:22px">${escapeHtml(title)}</h1>${body}</body></html>`,
    );
}

const paragraph = (text: string) => `<p style="line-height:1.5">${escapeHtml(text)}</p>`;

/** A form posting back to this very URL (no action: the query string carries the signed link). */
function buttonForm(fields: Record<string, string>, label: string): string {
  const hidden = Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  return `<form method="post">${hidden}<button type="submit" style="padding:10px 20px;font-size:16px;border-radius:6px;border:0;background:#111827;color:#fff;cursor:pointer">${escapeHtml(label)}</button></form>`;
}

/** Link parameters from the query string, overridden by the submitted form. */
const linkParams = (req: Request): Record<string, unknown> => ({
  ...(req.query as object),
  ...(typeof req.body === 'object' && req.body ? req.body : {}),
});

async function findContactState(db: Db, contactId: string) {
  return db.contact.findUnique({ where: { id: contactId }, select: { subscribed: true, unsubscribeReason: true } });
}

/** Only a pending contact (not subscribed, no unsubscribe reason) becomes subscribed. */
async function confirmPendingContact(db: Db, contactId: string, now: Date): Promise<boolean> {
  const rows = await prismaExecutor(db).query<{ id: string }>(
    `WITH changed AS (
       UPDATE "Contact" c SET subscribed = true, "updatedAt" = $2::timestamptz
       FROM "ContactBook" b
       WHERE c.id = $1 AND b.id = c."contactBookId" AND c.subscribed = false AND c."unsubscribeReason" IS NULL
       RETURNING c.*, b."teamId" AS "teamId"
     ), events AS (
       ${contactEventsInsertSql({ source: 'changed', teamIdSql: 's."teamId"', typeSql: `'contact.updated'`, idsParam: '$3', nowParam: '$2' })}
     ), builtin_events AS (
       ${contactEventsSql({
         source: 'changed',
         teamIdSql: 's."teamId"',
         insertedSql: 'false',
         wasSubscribedSql: 'false',
         hadReasonSql: 'false',
         nowParam: '$2',
         idPrefixParam: '$4',
       })}
     )
     SELECT id FROM changed`,
    [contactId, now, [newId()], emailIdPrefixAt(now.getTime())],
  );
  return rows.length > 0;
}

// Unsubscribed (or bounced) addresses are not re-subscribed by an old confirmation link.
const unsubscribedMeanwhile = (res: Response) =>
  page(res, 409, 'Subscription not confirmed', paragraph('This address has been unsubscribed, so this link can no longer confirm it.'));

export function subscriptionPages(deps: ApiDeps): Router {
  const r = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  // ---------------------------------------------------------------- double opt-in confirmation
  const checkConfirmLink = (req: Request, res: Response): string | null => {
    const check = verifyDoubleOptInLink(deps.config, linkParams(req), deps.clock.now());
    if (check.ok) return check.contactId;
    if (check.reason === 'expired') {
      page(
        res,
        410,
        'This link has expired',
        paragraph('Confirmation links are valid for 7 days. Please sign up again to receive a new one.'),
      );
    } else {
      page(
        res,
        400,
        'Invalid confirmation link',
        paragraph('This confirmation link is not valid. Please use the link from the email exactly as it was sent.'),
      );
    }
    return null;
  };

  r.get('/subscribe/confirm', async (req, res) => {
    const contactId = checkConfirmLink(req, res);
    if (!contactId) return;
    const contact = await findContactState(deps.db, contactId);
    if (!contact) return page(res, 404, 'Subscription not found', paragraph('This subscription no longer exists.'));
    if (contact.subscribed) return page(res, 200, 'Subscription confirmed', paragraph('Your subscription is already confirmed.'));
    if (contact.unsubscribeReason) return unsubscribedMeanwhile(res);
    const { contactId: c, expiresAt, signature } = req.query as Record<string, string>;
    page(
      res,
      200,
      'Confirm your subscription',
      paragraph('Please confirm that you want to receive our emails.') +
        buttonForm({ contactId: c, expiresAt, signature }, 'Confirm subscription'),
    );
  });

  r.post('/subscribe/confirm', form, async (req, res) => {
    const contactId = checkConfirmLink(req, res);
    if (!contactId) return;
    if (await confirmPendingContact(deps.db, contactId, deps.clock.now())) {
      return page(res, 200, 'Subscription confirmed', paragraph('Thank you, your subscription is confirmed.'));
    }
    const contact = await findContactState(deps.db, contactId);
    if (!contact) return page(res, 404, 'Subscription not found', paragraph('This subscription no longer exists.'));
    if (contact.subscribed) return page(res, 200, 'Subscription confirmed', paragraph('Your subscription is already confirmed.'));
    unsubscribedMeanwhile(res);
  });

  // ---------------------------------------------------------------- unsubscribe
  r.get('/unsubscribe', async (req, res) => {
    const link = verifyUnsubscribeLink(deps.config, req.query as Record<string, unknown>);
    if (!link)
      return page(
        res,
        400,
        'Invalid unsubscribe link',
        paragraph('This unsubscribe link is not valid. Please use the link from the email exactly as it was sent.'),
      );
    const contact = await findContactState(deps.db, link.contactId);
    if (!contact) return page(res, 404, 'Subscription not found', paragraph('This address is not on the list any more.'));
    if (contact.unsubscribeReason) return page(res, 200, 'You are unsubscribed', paragraph('You will not receive these emails any more.'));
    page(
      res,
      200,
      'Unsubscribe',
      paragraph('Do you want to stop receiving these emails?') +
        buttonForm({ c: link.contactId, cid: link.campaignId ?? '', sig: String(req.query.sig) }, 'Unsubscribe'),
    );
  });

  // The page's button; also accepts an RFC 8058 one-click POST should a List-Unsubscribe header point here.
  r.post('/unsubscribe', form, async (req, res) => {
    const link = verifyUnsubscribeLink(deps.config, linkParams(req));
    if (!link) return page(res, 400, 'Invalid unsubscribe link', paragraph('This unsubscribe link is not valid.'));
    await unsubscribeContact(deps.db, link.contactId, link.campaignId, deps.clock.now());
    if (!(await findContactState(deps.db, link.contactId)))
      return page(res, 404, 'Subscription not found', paragraph('This address is not on the list any more.'));
    page(res, 200, 'You are unsubscribed', paragraph('You will not receive these emails any more.'));
  });

  // RFC 8058: the mail client POSTs `List-Unsubscribe=One-Click` to the List-Unsubscribe URL. The
  // signature authenticates the request; the body is not required, so clients that send it as
  // multipart are not turned away.
  r.post('/unsubscribe/one-click', form, async (req, res) => {
    const link = verifyUnsubscribeLink(deps.config, req.query as Record<string, unknown>);
    if (!link) return res.status(400).json({ error: { code: 'BAD_REQUEST', message: 'Invalid unsubscribe link' } });
    await unsubscribeContact(deps.db, link.contactId, link.campaignId, deps.clock.now());
    if (!(await findContactState(deps.db, link.contactId)))
      return res.status(404).json({ error: { code: 'NOT_FOUND', message: 'Contact not found' } });
    res.json({ success: true, message: 'Successfully unsubscribed' });
  });

  return r;
}
