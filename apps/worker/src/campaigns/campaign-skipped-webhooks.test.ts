import { Webhooks } from 'usesend-js';
import { encryptSecret } from '@mailrail/platform/crypto/secrets';
import { newId } from '@mailrail/platform/ids';
import { newWebhookSecret } from '@mailrail/domain/webhooks/signing';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { startReceiver, type Receiver } from '@mailrail/testing/webhook-receiver';
import { useTestWorkerEnv } from '../testing/worker-harness';
import { runCampaignWindow } from './run-campaign-window';
import { prepareRecipients } from './prepare-recipients';

// A campaign's contacts that are not sent to reach the team's webhooks as
// `campaign.recipient_skipped`, one per contact, from both places that skip one: the audience's
// preparation (already suppressed) and a window (suppressed, unsubscribed or deleted since). The
// campaign runs its steps here; the real worker dispatches the outbox and signs the deliveries to
// a real HTTP receiver.

const env = useTestWorkerEnv({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DISPATCH_EVERY_MS: '50' });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

async function addWebhook(teamId: number, events: string[] = []) {
  const secret = newWebhookSecret();
  const id = newId();
  await env.deps.db.webhook.create({
    data: { id, teamId, url: receiver.url, events, domainIds: [], status: 'ACTIVE', secretEnc: encryptSecret(env.config.SECRET, secret) },
  });
  return { id, secret };
}

const skippedEvents = (campaignId: string) =>
  env.deps.db.webhookEvent.findMany({ where: { type: 'campaign.recipient_skipped', data: { path: ['campaignId'], equals: campaignId } } });

it("a campaign's skipped contacts reach the webhook once each, with the outcome and reason of the recipients listing", async () => {
  const hook = await addWebhook(env.teamId, ['campaign.recipient_skipped']);
  const domain = 'skipped.test';
  const book = await seedContactBook(env.deps.db, env.teamId, { subscribed: 5 }, { domain });
  // s1 is suppressed before the audience is fixed.
  await env.deps.db.suppression.create({ data: { id: newId(), teamId: env.teamId, email: `s1@${domain}`, reason: 'HARD_BOUNCE' } });
  const campaignId = await insertScheduledCampaign(env.deps.db, {
    teamId: env.teamId,
    domainId: env.domain.id,
    contactBookId: book.id,
    from: `news@${env.domain.name}`,
    scheduledAt: new Date(),
  });
  await env.deps.db.campaign.update({ where: { id: campaignId }, data: { status: 'RUNNING' } });
  await prepareRecipients(env.deps, campaignId, new Date());
  // A replayed preparation (a retried job) records nothing twice.
  await env.deps.db.campaign.update({ where: { id: campaignId }, data: { recipientsReadyAt: null } });
  await prepareRecipients(env.deps, campaignId, new Date());
  expect(await skippedEvents(campaignId)).toHaveLength(1);

  // Between the audience and the window: s2 unsubscribes, s3 is deleted, s4 complains elsewhere.
  const contactId = (i: number) => `${book.id}_s${String(i).padStart(7, '0')}`;
  await env.deps.db.contact.update({ where: { id: contactId(2) }, data: { subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' } });
  await env.deps.db.contact.delete({ where: { id: contactId(3) } });
  await env.deps.db.suppression.create({ data: { id: newId(), teamId: env.teamId, email: `s4@${domain}`, reason: 'COMPLAINT' } });
  expect(await runCampaignWindow(env.deps, campaignId)).toMatchObject({ queued: 1, skipped: 3 });
  // A second window finds nothing pending and writes nothing.
  await runCampaignWindow(env.deps, campaignId);
  expect(await skippedEvents(campaignId)).toHaveLength(4);

  await env.start();
  await env.waitFor(async () => receiver.calls.filter((c) => c.json.type === 'campaign.recipient_skipped').length >= 4);
  const calls = receiver.calls.filter((c) => c.json.type === 'campaign.recipient_skipped');
  for (const call of calls)
    expect(() => new Webhooks(hook.secret).verify(call.body, { headers: call.headers as Record<string, string> })).not.toThrow();
  const data = calls
    .map((c) => c.json.data as Record<string, unknown>)
    .sort((a, b) => String(a.contactId).localeCompare(String(b.contactId)));
  expect(data).toEqual([
    {
      campaignId,
      contactId: contactId(1),
      email: `s1@${domain}`,
      outcome: 'suppressed',
      reason: 'HARD_BOUNCE',
      occurredAt: expect.any(String),
    },
    {
      campaignId,
      contactId: contactId(2),
      email: `s2@${domain}`,
      outcome: 'unsubscribed',
      reason: 'UNSUBSCRIBED',
      occurredAt: expect.any(String),
    },
    {
      campaignId,
      contactId: contactId(3),
      email: `s3@${domain}`,
      outcome: 'unsubscribed',
      reason: 'CONTACT_DELETED',
      occurredAt: expect.any(String),
    },
    {
      campaignId,
      contactId: contactId(4),
      email: `s4@${domain}`,
      outcome: 'suppressed',
      reason: 'COMPLAINT',
      occurredAt: expect.any(String),
    },
  ]);
  // The recipients listing says the same of each of them; s5 was sent (the started worker sends it).
  const rows = await env.deps.db.campaignEmail.findMany({
    where: { campaignId, status: { in: ['SUPPRESSED', 'UNSUBSCRIBED'] } },
    orderBy: { contactId: 'asc' },
    select: { status: true, reason: true },
  });
  expect(rows.map((r) => [r.status, r.reason])).toEqual([
    ['SUPPRESSED', 'HARD_BOUNCE'],
    ['UNSUBSCRIBED', 'UNSUBSCRIBED'],
    ['UNSUBSCRIBED', 'CONTACT_DELETED'],
    ['SUPPRESSED', 'COMPLAINT'],
  ]);
});

it('writes no event for a team without an active webhook', async () => {
  const team = await env.deps.db.team.create({ data: { name: 'No hooks' } });
  const domainRow = await env.deps.db.domain.findUniqueOrThrow({ where: { id: env.domain.id } });
  const book = await seedContactBook(env.deps.db, team.id, { subscribed: 2 }, { domain: 'quiet.test' });
  await env.deps.db.suppression.create({ data: { id: newId(), teamId: team.id, email: 's1@quiet.test', reason: 'MANUAL' } });
  const campaignId = await insertScheduledCampaign(env.deps.db, {
    teamId: team.id,
    domainId: domainRow.id,
    contactBookId: book.id,
    from: `news@${env.domain.name}`,
    scheduledAt: new Date(),
  });
  await env.deps.db.campaign.update({ where: { id: campaignId }, data: { status: 'RUNNING' } });
  await prepareRecipients(env.deps, campaignId, new Date());
  expect(await env.deps.db.campaignEmail.count({ where: { campaignId, status: 'SUPPRESSED' } })).toBe(1);
  expect(await skippedEvents(campaignId)).toHaveLength(0);
});
