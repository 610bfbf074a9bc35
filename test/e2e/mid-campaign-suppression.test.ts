// A campaign writes its emails well before SES paces them out. An address suppressed through the
// API in between must not get the campaign's mail, and the campaign counts it as suppressed
// (issue 44): the API, the worker (campaign engine and send workers) and the fake SES on one
// database and Redis prefix, as in production. The send queue is paused while the suppression
// arrives, as a backlog behind the SES rate would hold it.
import request from 'supertest';
import { createApiKey } from '@mailrail/domain/teams/api-keys';
import { newWebhookSecret } from '@mailrail/domain/webhooks/signing';
import { encryptSecret } from '@mailrail/platform/crypto/secrets';
import { queueNames } from '@mailrail/platform/queue/queues';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { createApp } from '../../apps/api/src/app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../../apps/api/src/deps';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

let env: TestWorkerEnv;
let api: ApiDeps;
let app: ReturnType<typeof createApp>;
let auth: { Authorization: string };

beforeAll(async () => {
  env = await startTestWorkerEnv({ CAMPAIGN_SCAN_INTERVAL_MS: '300' });
  api = createApiDeps(env.config);
  app = createApp(api);
  auth = { Authorization: `Bearer ${(await createApiKey(api.db, { teamId: env.teamId })).apiKey}` };
  // An active webhook: the outbox writes webhook events only for teams that have one.
  await env.deps.db.webhook.create({
    data: {
      id: 'mid-campaign-hook',
      teamId: env.teamId,
      url: 'https://hooks.example/in',
      events: [],
      domainIds: [],
      status: 'ACTIVE',
      secretEnc: encryptSecret(env.config.SECRET, newWebhookSecret()),
    },
  });
  await env.start();
});
afterAll(async () => {
  app.close();
  await closeApiDeps(api);
  await env.close();
});

it("a mid-campaign suppression stops that recipient's send", async () => {
  const domain = 'mid-campaign.test';
  const book = await seedContactBook(env.deps.db, env.teamId, { subscribed: 5 }, { domain });
  const sendQueue = env.deps.queues.get(queueNames.send(env.domain.region, 'marketing'));
  await sendQueue.pause();
  const campaignId = await insertScheduledCampaign(env.deps.db, {
    teamId: env.teamId,
    domainId: env.domain.id,
    contactBookId: book.id,
    from: `News <news@${env.domain.name}>`,
    scheduledAt: new Date(Date.now() - 1000),
  });

  // The campaign started: every recipient has its email written and queued, none is sent yet.
  await env.waitFor(async () => {
    const queued = await env.deps.db.campaignEmail.count({ where: { campaignId, status: 'QUEUED' } });
    return queued === 5;
  }, 30_000);
  const target = `s3@${domain}`;
  const targetRow = await env.deps.db.campaignEmail.findFirstOrThrow({ where: { campaignId, email: target } });
  expect((await env.email(targetRow.emailId!)).latestStatus).toBe('QUEUED');

  const added = await request(app.app).post('/api/v1/suppressions').set(auth).send({ email: 'S3@Mid-Campaign.test' });
  expect(added.status).toBe(200);
  expect(added.body).toMatchObject({ email: target, reason: 'MANUAL' });
  // The written email is withdrawn at once, with why.
  const withdrawn = await env.email(targetRow.emailId!);
  expect(withdrawn.latestStatus).toBe('SUPPRESSED');
  expect(withdrawn.skippedRecipients).toEqual([{ email: target, type: 'to', status: 'SUPPRESSED', reason: 'MANUAL' }]);

  await sendQueue.resume();
  await env.waitFor(async () => (await env.deps.db.campaign.findUniqueOrThrow({ where: { id: campaignId } })).status === 'SENT', 30_000);

  expect(env.ses.messagesTo(target)).toHaveLength(0);
  for (const i of [1, 2, 4, 5]) expect(env.ses.messagesTo(`s${i}@${domain}`)).toHaveLength(1);
  expect(await env.deps.db.campaignEmail.findFirstOrThrow({ where: { campaignId, email: target } })).toMatchObject({
    status: 'SUPPRESSED',
    reason: 'MANUAL',
  });
  const shown = await request(app.app).get(`/api/v1/campaigns/${campaignId}`).set(auth).expect(200);
  expect(shown.body).toMatchObject({ status: 'SENT', total: 5, sent: 4 });
  expect(shown.body.recipientOutcomes).toMatchObject({ sent: 4, suppressed: 1, inProgress: 0, skippedByReason: { MANUAL: 1 } });
  // ...and the team's webhooks hear of it, as of any skipped recipient, once.
  const skipped = await env.deps.db.webhookEvent.findMany({
    where: { type: 'campaign.recipient_skipped', data: { path: ['campaignId'], equals: campaignId } },
  });
  expect(skipped.map((e) => e.data)).toEqual([
    expect.objectContaining({ contactId: targetRow.contactId, email: target, outcome: 'suppressed', reason: 'MANUAL' }),
  ]);
});
