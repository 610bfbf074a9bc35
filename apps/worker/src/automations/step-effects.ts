import { createHash } from 'node:crypto';
import type { Config } from '@mailrail/platform/config/schema';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { newId } from '@mailrail/platform/ids';
import { newContactIds } from '@mailrail/domain/audience/contact-id';
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
    case 'updateContact':
      await tx.execute(`UPDATE "Contact" SET properties = properties || $2::jsonb, "updatedAt" = $3 WHERE id = $1`, [
        contact.id,
        JSON.stringify(effect.properties),
        now,
      ]);
      return { ok: true };
    case 'addToBook': {
      const [book] = await tx.query<{ id: string }>(`SELECT id FROM "ContactBook" WHERE id = $1 AND "teamId" = $2`, [
        effect.contactBookId,
        run.teamId,
      ]);
      if (!book) return { ok: false, reason: `contact book ${effect.contactBookId} not found` };
      await tx.execute(
        `INSERT INTO "Contact" (id, "contactBookId", email, "firstName", "lastName", properties, subscribed, "createdAt", "updatedAt")
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, true, $7, $7) ON CONFLICT ("contactBookId", email) DO NOTHING`,
        [
          newContactIds(1, now.getTime())[0],
          book.id,
          contact.email,
          contact.firstName,
          contact.lastName,
          JSON.stringify(contact.properties),
          now,
        ],
      );
      return { ok: true };
    }
    case 'removeFromBook':
      await tx.execute(
        `DELETE FROM "Contact" c USING "ContactBook" b WHERE b.id = c."contactBookId" AND b.id = $1 AND b."teamId" = $2 AND c.email = $3`,
        [effect.contactBookId, run.teamId, contact.email],
      );
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
