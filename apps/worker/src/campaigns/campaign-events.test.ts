import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { recordOutcomes } from './scan-campaigns';

// The built-in campaign.sent event (docs/custom-events.md#built-in-events): one per recipient the
// campaign sent to, written by the statement that marks the recipient SENT, in a real worker
// against the fake SES; and the email events of a campaign email go to its contact.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv({ CAMPAIGN_SCAN_INTERVAL_MS: '300' });
  await env.start();
});
afterAll(() => env.close());

const eventsOf = (name: string, campaignId: string) =>
  env.deps.db.event.findMany({ where: { teamId: env.teamId, name, properties: { path: ['campaignId'], equals: campaignId } } });

it('writes campaign.sent once per contact sent to, and email events of a campaign email to its contact', async () => {
  const book = await seedContactBook(env.deps.db, env.teamId, { subscribed: 3, unsubscribed: 1 }, { domain: 'campaign-events.test' });
  const id = await insertScheduledCampaign(env.deps.db, {
    teamId: env.teamId,
    domainId: env.domain.id,
    contactBookId: book.id,
    from: `news@${env.domain.name}`,
    scheduledAt: new Date(),
  });
  await env.waitFor(async () => (await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).status === 'SENT', 30_000);

  const sent = await eventsOf('campaign.sent', id);
  const recipients = await env.deps.db.campaignEmail.findMany({ where: { campaignId: id, status: 'SENT' } });
  expect(recipients).toHaveLength(3);
  expect(sent.map((e) => e.contactId).sort()).toEqual(recipients.map((r) => r.contactId).sort());
  for (const e of sent) {
    const r = recipients.find((x) => x.contactId === e.contactId)!;
    expect(e).toMatchObject({ source: 'mailrail', contactBookId: book.id, properties: { campaignId: id, emailId: r.emailId } });
  }
  // The outcomes run again (a later scan, a replayed one): nothing becomes SENT twice, no event twice.
  await recordOutcomes(env.deps, id, new Date());
  expect(await eventsOf('campaign.sent', id)).toHaveLength(3);

  // SES reports one campaign email delivered, twice (SNS retries): one email.delivered, its contact's.
  const email = await env.deps.db.email.findUniqueOrThrow({ where: { id: recipients[0].emailId! } });
  const message = JSON.stringify({
    eventType: 'Delivery',
    mail: { messageId: email.sesEmailId, headers: [] },
    delivery: { recipients: [email.toAddresses[0]] },
  });
  const job = { snsMessageId: `sns-${email.id}`, topicArn: 'arn', message };
  expect(await processSesEventJob({ db: env.deps.db }, job)).toBe('processed');
  expect(await processSesEventJob({ db: env.deps.db }, job)).toBe('duplicate');
  const delivered = await eventsOf('email.delivered', id);
  expect(delivered).toHaveLength(1);
  expect(delivered[0]).toMatchObject({
    contactId: recipients[0].contactId,
    externalId: `ses:sns-${email.id}`,
    properties: { emailId: email.id, campaignId: id },
  });
});
