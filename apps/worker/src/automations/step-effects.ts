import { createHash } from 'node:crypto';
import type { Config } from '@mailrail/platform/config/schema';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { newId } from '@mailrail/platform/ids';
import { deleteContactsFromBook, updateContactInBook } from '@mailrail/domain/audience/contact-changes';
import { upsertContactsIntoBook } from '@mailrail/domain/audience/upsert-contacts';
import { buildOneClickUnsubscribeUrl, buildUnsubscribeUrl } from '@mailrail/domain/audience/links';
import type { ContactFacts, RunContext } from '@mailrail/domain/automations/conditions';
import type { StepEffect } from '@mailrail/domain/automations/step-decision';
import { contactVariables, personalizeCampaignBody, prepareCampaignBody } from '@mailrail/domain/campaigns/campaign-content';
import { insertEmailRows, prepareEmails, type PreparedEmail } from '@mailrail/domain/emails/create-emails';
import { parseAddress } from '@mailrail/domain/emails/address';

// The side effects of steps, each written on the step's own transaction (`tx`), so it commits
// with the run's advance or not at all. A send step writes its email through the email intake's
// statement (insertEmailRows: the row, its first event, its webhook outbox row) together with an
// idempotency record keyed by run and step: even a second execution of the same step could not
// store a second email (the key is unique per team). Its send job is added after COMMIT; a job
// Redis loses is re-added by the send sweeper from PostgreSQL.

export interface EffectRun {
  id: string;
  teamId: number;
  automationId: string;
  /** The log entry number of this step (stepCount + 1): part of the idempotency key. */
  seq: number;
}

export type EffectResult = { ok: true; emailId?: string; prepared?: PreparedEmail[] } | { ok: false; reason: string };

/** The idempotency key of a send step's email: one per run and step execution. */
export const automationSendKey = (runId: string, seq: number) => `automation:${runId}:${seq}`;

/** Variables of a send step: the contact's (as campaigns), and the trigger event's top-level scalars as `event_<key>`. */
function stepVariables(config: Pick<Config, 'PUBLIC_URL' | 'SECRET'>, contact: ContactFacts, ctx: RunContext) {
  const vars = contactVariables(contact, [], buildUnsubscribeUrl(config, contact.id, null));
  for (const [k, v] of Object.entries(ctx.event?.properties ?? {}))
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') vars[`event_${k}`] = v;
  if (ctx.event) vars.event_name = ctx.event.name;
  return vars;
}

export async function applyEffect(
  tx: SqlExecutor,
  config: Pick<Config, 'PUBLIC_URL' | 'SECRET' | 'AWS_REGION'>,
  run: EffectRun,
  contact: ContactFacts,
  ctx: RunContext,
  effect: StepEffect,
  now: Date,
): Promise<EffectResult> {
  switch (effect.type) {
    case 'sendEmail': {
      const s = effect.step;
      const sender = parseAddress(s.from);
      if (!sender) return { ok: false, reason: `from "${s.from}" is not an address` };
      const [domain] = await tx.query<{ id: number; region: string }>(
        `SELECT id, region FROM "Domain" WHERE "teamId" = $1 AND name = $2 AND status = 'SUCCESS'`,
        [run.teamId, sender.domain],
      );
      if (!domain) return { ok: false, reason: `${sender.domain} is not a verified domain of the team` };
      let subject = s.subject ?? '';
      let html = s.html ?? '';
      if (s.templateId) {
        const [t] = await tx.query<{ subject: string; html: string | null }>(
          `SELECT subject, html FROM "Template" WHERE id = $1 AND "teamId" = $2`,
          [s.templateId, run.teamId],
        );
        if (!t?.html) return { ok: false, reason: `template ${s.templateId} not found (or has no html)` };
        subject = t.subject;
        html = t.html;
      }
      const personal = personalizeCampaignBody(prepareCampaignBody({ subject, html }), stepVariables(config, contact, ctx));
      const prepared = prepareEmails(
        [
          {
            teamId: run.teamId,
            domainId: domain.id,
            region: domain.region ?? config.AWS_REGION,
            source: 'AUTOMATION',
            from: s.from,
            to: [contact.email],
            replyTo: s.replyTo ? [s.replyTo] : [],
            subject: personal.subject,
            html: personal.html,
            text: personal.text,
            contactId: contact.id,
            unsubUrl: buildOneClickUnsubscribeUrl(config, contact.id, null),
            lane: 'marketing',
          },
        ],
        now,
      );
      const key = automationSendKey(run.id, run.seq);
      const bodyHash = createHash('sha256').update(key).digest('hex');
      await insertEmailRows(tx, prepared, now, [{ teamId: run.teamId, key, bodyHash, emailIds: [prepared[0].created.id] }]);
      return { ok: true, emailId: prepared[0].created.id, prepared };
    }
    // Through the contacts API's own update, merge and delete (packages/domain/src/audience): the
    // same webhook rows and built-in events as a change made through the API.
    case 'updateContact': {
      const [book] = await tx.query<{ id: string; variables: string[] }>(
        `SELECT b.id, b.variables FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId" WHERE c.id = $1 AND b."teamId" = $2`,
        [contact.id, run.teamId],
      );
      if (book) await updateContactInBook(tx, { ...book, teamId: run.teamId }, contact.id, { properties: effect.properties }, now);
      return { ok: true };
    }
    case 'addToBook': {
      const [book] = await tx.query<{ id: string; variables: string[] }>(
        `SELECT id, variables FROM "ContactBook" WHERE id = $1 AND "teamId" = $2`,
        [effect.contactBookId, run.teamId],
      );
      if (!book) return { ok: false, reason: `contact book ${effect.contactBookId} not found` };
      // A contact already in the book is left as it is; a new one is subscribed without a double
      // opt-in (it is already the team's contact, as with an import).
      await upsertContactsIntoBook(
        tx,
        {
          contactBookId: book.id,
          teamId: run.teamId,
          variables: book.variables,
          awaitConfirmation: false,
          onExisting: 'SKIP',
          emitEvents: true,
        },
        [
          {
            email: contact.email,
            firstName: contact.firstName ?? undefined,
            lastName: contact.lastName ?? undefined,
            properties: textProperties(contact.properties),
          },
        ],
        now,
      );
      return { ok: true };
    }
    case 'removeFromBook':
      await deleteContactsFromBook(tx, { id: effect.contactBookId, teamId: run.teamId }, { email: contact.email }, now);
      return { ok: true };
    case 'webhook':
      await tx.execute(
        `INSERT INTO "WebhookEvent" (id, "teamId", type, "domainId", data, "createdAt") VALUES ($1, $2, 'automation.webhook', NULL, $3::jsonb, $4)`,
        [
          newId(),
          run.teamId,
          JSON.stringify({
            automationId: run.automationId,
            runId: run.id,
            contactId: contact.id,
            email: contact.email,
            event: ctx.event ? { id: ctx.event.id, name: ctx.event.name } : null,
            payload: effect.payload,
          }),
          now,
        ],
      );
      return { ok: true };
  }
}

/** A contact's properties as the contacts API takes them (text): numbers and booleans as written, nulls left out. */
function textProperties(props: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(props)) if (v !== null && v !== undefined) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}
