import type { EmailStatus, WebhookEvent } from '@mailrail/platform/db/client';
import { insertEmailRows, prepareEmails, type EmailDraft } from '../emails/create-emails';
import { newId } from '@mailrail/platform/ids';
import { createTeam } from '../teams/api-keys';
import { useTestDatabase } from '@mailrail/testing/databases';
import { EMAIL_OUTBOX_RETURNING, emailOutboxInsertSql } from '../sql/email-outbox';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { emailStatusWebhookEvent } from './events';
import { EMAIL_FOR_WEBHOOK_COLUMNS, recordEmailStatusEvent } from './payloads';

// The email event is written two ways: in SQL, by the statement that changes the status (insert,
// cancel, send failure), and in TypeScript, by the SES event processor. A receiver must not be
// able to tell which one wrote it: same type, same fields, same JSON types, same nulls, same
// timestamp format, once stored in PostgreSQL.

const database = useTestDatabase();
let teamId: number;
let domainId: number;

beforeAll(async () => {
  const db = database.db;
  teamId = (await createTeam(db, 'Agreement')).id;
  domainId = (await db.domain.create({ data: { teamId, name: 'agree.example.com', publicKey: 'p' } })).id;
  // Without an active webhook the SQL path writes nothing.
  await db.webhook.create({ data: { id: newId(), teamId, url: 'https://hooks.example.com/x', secretEnc: 'x', events: [] } });
});

let testStartedAt: number;
beforeEach(async () => {
  testStartedAt = Date.now();
  await database.db.webhookEvent.deleteMany();
});

const comparable = (e: WebhookEvent) => ({ teamId: e.teamId, type: e.type, domainId: e.domainId, data: e.data });
const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The events the SQL path wrote, each beside what the TypeScript path writes for the same email, status and instant. */
async function bothWays(): Promise<{ sql: ReturnType<typeof comparable>; ts: ReturnType<typeof comparable> }[]> {
  const db = database.db;
  const written = await db.webhookEvent.findMany({ orderBy: { id: 'asc' } });
  const pairs = [];
  for (const sqlEvent of written) {
    const data = sqlEvent.data as { id: string; status: EmailStatus; occurredAt: string };
    expect(data.occurredAt).toMatch(ISO_MS_UTC);
    // The instant of the change: during this test (+ 1: PostgreSQL rounds to the millisecond).
    expect(Date.parse(data.occurredAt)).toBeGreaterThanOrEqual(testStartedAt);
    expect(Date.parse(data.occurredAt)).toBeLessThanOrEqual(Date.now() + 1);
    const email = await db.email.findUniqueOrThrow({ where: { id: data.id }, select: EMAIL_FOR_WEBHOOK_COLUMNS });
    const tsId = await db.$transaction((tx) => recordEmailStatusEvent(tx, email, data.status, new Date(data.occurredAt)));
    const tsEvent = await db.webhookEvent.findUniqueOrThrow({ where: { id: tsId! } });
    pairs.push({ sql: comparable(sqlEvent), ts: comparable(tsEvent) });
  }
  return pairs;
}

describe('the email webhook event, written in SQL and in TypeScript', () => {
  it('agrees for emails inserted by insertEmailRows (sends, batches, campaigns), with and without optional fields', async () => {
    const now = new Date();
    const full: EmailDraft = {
      teamId,
      domainId,
      region: 'us-east-1',
      source: 'API',
      from: '"Ann, \\"A\\"" <a@agree.example.com>',
      to: ['q"uote@x.org', 'Ünï@x.org'],
      subject: "It's ✓ {{x}}",
      templateId: 'tpl1',
      campaignId: 'cmp1',
      contactId: 'ct1',
      lane: 'marketing',
      skippedRecipients: [{ email: 'Gone <gone@x.org>', type: 'cc', status: 'SUPPRESSED', reason: 'HARD_BOUNCE' }],
    };
    const bare: EmailDraft = {
      teamId,
      domainId: null,
      region: 'us-east-1',
      source: 'API',
      from: 'b@x.org',
      to: ['c@x.org'],
      subject: 'bare',
      suppressed: { reason: 'bounced' },
    };
    const later: EmailDraft = { ...bare, suppressed: null, subject: 'later', scheduledAt: new Date(now.getTime() + 3_600_000) };
    await insertEmailRows(prismaExecutor(database.db), prepareEmails([full, bare, later], now), now);

    const pairs = await bothWays();
    expect(pairs.map((p) => p.sql.type).sort()).toEqual(['email.queued', 'email.suppressed']); // SCHEDULED is no event
    for (const { sql, ts } of pairs) expect(sql).toStrictEqual(ts);
    const queued = pairs.find((p) => p.sql.type === 'email.queued')!.sql.data as Record<string, unknown>;
    expect(queued).toMatchObject({
      domainId,
      templateId: 'tpl1',
      campaignId: 'cmp1',
      contactId: 'ct1',
      to: full.to,
      subject: full.subject,
      skippedRecipients: full.skippedRecipients,
    });
    const suppressed = pairs.find((p) => p.sql.type === 'email.suppressed')!.sql.data as Record<string, unknown>;
    expect(suppressed).toMatchObject({ domainId: null, campaignId: null, contactId: null });
    expect(suppressed).not.toHaveProperty('templateId');
    expect(suppressed).not.toHaveProperty('skippedRecipients');
  });

  it('agrees for every status a status-changing statement can set (as cancel and send failure use it)', async () => {
    const now = new Date();
    const draft: EmailDraft = {
      teamId,
      domainId,
      region: 'us-east-1',
      source: 'API',
      from: 'a@agree.example.com',
      to: ['x@y.org', 'z@y.org'],
      subject: 'each',
      templateId: 'tpl2',
    };
    const [prepared] = prepareEmails([draft], now);
    await insertEmailRows(prismaExecutor(database.db), [prepared], now);

    for (const status of Object.keys(emailStatusWebhookEvent) as EmailStatus[]) {
      await database.db.webhookEvent.deleteMany();
      await prismaExecutor(database.db).execute(
        `WITH changed AS (
           UPDATE "Email" SET "latestStatus" = $2::"EmailStatus" WHERE id = $1 RETURNING ${EMAIL_OUTBOX_RETURNING}
         )
         ${emailOutboxInsertSql('changed')}`,
        [prepared.created.id, status],
      );
      const pairs = await bothWays();
      expect(pairs.map((p) => p.sql.type)).toEqual(emailStatusWebhookEvent[status] ? [emailStatusWebhookEvent[status]] : []);
      for (const { sql, ts } of pairs) expect(sql).toStrictEqual(ts);
    }
  });
});
