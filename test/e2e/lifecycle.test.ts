import { createServer } from 'node:http';
// The API and the worker together, on one database and one Redis prefix, as in production: an
// email goes from POST /api/v1/emails through the worker to SES (a fake SES endpoint on
// loopback, reached through the real AWS SDK), SES's delivery event comes back through signed
// SNS, and the status, the counters and the outbound webhook follow. Only the SNS certificate
// download is replaced (no internet here): the test signs with its own certificate.
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { UseSend, Webhooks } from 'usesend-js';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { queueNames } from '@mailrail/platform/queue/queues';
import { type Config } from '@mailrail/platform/config/schema';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { queueIsIdle } from '@mailrail/testing/queue-state';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { waitFor as waitUntil } from '@mailrail/testing/wait-for';
import { startReceiver, type Receiver } from '@mailrail/testing/webhook-receiver';
import { createApp } from '../../apps/api/src/app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../../apps/api/src/deps';
import {
  createTestSnsSigner,
  sesEventMessage,
  TEST_TOPIC_ARN,
  type TestSnsSigner,
} from '../../apps/api/src/ses-notifications/testing/sns-signer';
import { closeWorkerDeps, createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import { startWorker, type RunningWorker } from '../../apps/worker/src/worker';

let databaseUrl: string;
let prefix: string;
let config: Config;
let ses: FakeSes;
let sns: TestSnsSigner;
let api: ApiDeps;
let app: ReturnType<typeof createApp>;
let worker: WorkerDeps;
let running: RunningWorker;
let receiver: Receiver;
let auth: { Authorization: string };
const DOMAIN = 'e2e.example.com';

const waitFor = <T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000) => waitUntil(probe, { timeoutMs });

/** Every webhook event dispatched, every delivery finished, no delivery job left to run. */
async function webhooksSettled(): Promise<boolean> {
  const [undispatched, unfinished] = await Promise.all([
    api.db.webhookEvent.count({ where: { dispatchedAt: null } }),
    api.db.webhookDelivery.count({ where: { status: { in: ['PENDING', 'IN_PROGRESS'] } } }),
  ]);
  return undispatched === 0 && unfinished === 0 && (await queueIsIdle(worker.queues.get(queueNames.webhooks)));
}

beforeAll(async () => {
  [ses, sns] = await Promise.all([startFakeSes(), createTestSnsSigner()]);
  databaseUrl = await createTestDatabase();
  prefix = testRedisPrefix();
  config = testConfig(databaseUrl, prefix, {
    SES_ENDPOINT: ses.url,
    SES_RATE_LIMIT: '100',
    SEND_SWEEP_CRON: '* * * * * *',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    PUBLIC_URL: 'http://mailrail.test',
    SNS_TOPIC_ARNS: TEST_TOPIC_ARN, // the test plays SNS on this topic; any other is refused
  });
  api = createApiDeps(config);
  app = createApp(api, {
    sesNotifications: { httpGet: async (url) => (url === sns.certUrl ? { status: 200, body: sns.certPem } : { status: 200, body: 'ok' }) },
  });
  worker = createWorkerDeps(config);
  running = await startWorker(worker);

  receiver = await startReceiver();

  const team = await createTeam(api.db, 'E2E');
  await insertDomain(api.db, config.SECRET, {
    teamId: team.id,
    name: DOMAIN,
    region: config.AWS_REGION,
    dkimSelector: config.DKIM_SELECTOR,
    verified: true,
  });
  auth = { Authorization: `Bearer ${(await createApiKey(api.db, { teamId: team.id })).apiKey}` };
});

afterAll(async () => {
  await running.close();
  app.close();
  await receiver.close();
  await deleteRedisPrefix(api.redis, prefix).catch(() => undefined);
  await closeWorkerDeps(worker);
  await closeApiDeps(api);
  await ses.close();
  await dropDatabase(databaseUrl);
});

it('sends through SES, follows the delivery event, counts it and tells the webhook', async () => {
  const hook = await request(app.app)
    .post('/api/v1/webhooks')
    .set(auth)
    .send({ url: receiver.url, events: ['email.delivered'] });
  expect(hook.status).toBe(200);
  const secret: string = hook.body.secret;

  const sent = await request(app.app)
    .post('/api/v1/emails')
    .set(auth)
    .send({ from: `Shop <orders@${DOMAIN}>`, to: 'buyer@example.org', subject: 'Your order', html: '<p>Thanks</p>' });
  expect(sent.status).toBe(200);
  const emailId: string = sent.body.emailId;

  // The worker claims it and SES accepts it exactly once.
  const email = await waitFor(async () => {
    const e = await api.db.email.findUnique({ where: { id: emailId } });
    return e?.latestStatus === 'SENT' && e;
  });
  expect(ses.messagesTo('buyer@example.org')).toHaveLength(1);
  expect(ses.messagesTo('buyer@example.org')[0].raw).toContain(`X-Usesend-Email-ID: ${emailId}`);

  // SES reports the delivery through SNS; posting it twice changes nothing more.
  const envelope = sns.notification(sesEventMessage('Delivery', { sesMessageId: email.sesEmailId!, emailId }));
  for (let i = 0; i < 2; i++) {
    const res = await request(app.app).post('/api/ses/notifications').set('Content-Type', 'text/plain').send(JSON.stringify(envelope));
    expect(res.status).toBe(200);
  }
  await waitFor(async () => (await api.db.email.findUnique({ where: { id: emailId } }))?.latestStatus === 'DELIVERED');

  const got = await request(app.app).get(`/api/v1/emails/${emailId}`).set(auth);
  expect(got.body.emailEvents.map((e: { status: string }) => e.status)).toEqual(['QUEUED', 'SENT', 'DELIVERED']);

  // The analytics add the counter deltas not folded yet; the worker's periodic fold then moves
  // the delivery into the daily row, once.
  const series = await request(app.app).get('/api/v1/analytics/email-time-series?days=7').set(auth);
  expect(series.body.result).toHaveLength(8);
  expect(series.body.totalCounts.delivered).toBe(1);
  const usage = await waitFor(async () => {
    const rows = await api.db.dailyEmailUsage.findMany({ where: { domainId: email.domainId! } });
    return rows.some((u) => u.delivered > 0) ? rows : undefined;
  });
  expect(usage.reduce((n, u) => n + u.delivered, 0)).toBe(1);

  // The webhook arrives once, signed so that the usesend-js SDK accepts it.
  const delivery = await waitFor(async () => receiver.calls.find((r) => r.headers['x-usesend-event'] === 'email.delivered'));
  const event = new Webhooks(secret).constructEvent(delivery.body, { headers: delivery.headers as Record<string, string> });
  expect(event).toMatchObject({ type: 'email.delivered', data: { id: emailId } });
  // Once both notifications are processed, every event dispatched and every delivery over, no
  // second call can still come.
  await waitFor(async () => (await queueIsIdle(worker.queues.get(queueNames.sesEvents))) && (await webhooksSettled()));
  expect(receiver.calls.filter((r) => r.headers['x-usesend-event'] === 'email.delivered')).toHaveLength(1);
});

it('double opt-in: the confirmation email reaches SES, its link shows a page, and POST confirms', async () => {
  const book = await request(app.app)
    .post('/api/v1/contactBooks')
    .set(auth)
    .send({ name: 'Newsletter', doubleOptInEnabled: true, doubleOptInFrom: `news@${DOMAIN}` });
  expect(book.status).toBe(200);
  const created = await request(app.app)
    .post(`/api/v1/contactBooks/${book.body.id}/contacts`)
    .set(auth)
    .send({ email: 'reader@example.org', firstName: 'Ada' });
  expect(created.status).toBe(200);

  const message = await waitFor(async () => ses.messagesTo('reader@example.org')[0]);
  const link = /http:\/\/mailrail\.test(\/subscribe\/confirm\?[^"\s<]+)/
    .exec(message.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='))?.[1]
    .replace(/&amp;/g, '&');
  expect(link).toBeDefined();

  const page = await request(app.app).get(link!);
  expect(page.status).toBe(200);
  expect(page.text).toContain('<form method="post">');
  expect((await api.db.contact.findUniqueOrThrow({ where: { id: created.body.contactId } })).subscribed).toBe(false);

  const confirmed = await request(app.app).post(link!).type('form').send({});
  expect(confirmed.status).toBe(200);
  expect((await api.db.contact.findUniqueOrThrow({ where: { id: created.body.contactId } })).subscribed).toBe(true);
});

it('an unchanged usesend-js client works against mailrail', async () => {
  const server = createServer(app.app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const client = new UseSend(auth.Authorization.slice('Bearer '.length), `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const sent = await client.emails.send({ from: `hello@${DOMAIN}`, to: 'sdk@example.org', subject: 'From the SDK', text: 'hi' });
    expect(sent.error).toBeNull();
    const emailId = sent.data!.emailId!;
    const got = await client.emails.get(emailId);
    expect(got.data).toMatchObject({ id: emailId, subject: 'From the SDK', to: ['sdk@example.org'] });
    await waitFor(async () => ses.messagesTo('sdk@example.org')[0]);

    const batch = await client.emails.batch([
      { from: `hello@${DOMAIN}`, to: 'one@example.org', subject: 'One', text: '1' },
      { from: `hello@${DOMAIN}`, to: 'two@example.org', subject: 'Two', text: '2' },
    ]);
    expect(batch.error).toBeNull();
    expect(batch.data).toHaveLength(2);

    const scheduled = await client.emails.send({
      from: `hello@${DOMAIN}`,
      to: 'later@example.org',
      subject: 'Later',
      text: 'x',
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(
      (await client.emails.update(scheduled.data!.emailId!, { scheduledAt: new Date(Date.now() + 7_200_000).toISOString() })).error,
    ).toBeNull();
    expect((await client.emails.cancel(scheduled.data!.emailId!)).error).toBeNull();

    const book = await client.contactBooks.create({ name: 'SDK book' });
    expect(book.error).toBeNull();
    const contact = await client.contacts.create(book.data!.id, { email: 'Reader@Example.org', firstName: 'Ada' });
    expect(contact.data?.contactId).toBeDefined();
    expect((await client.contacts.get(book.data!.id, contact.data!.contactId!)).data).toMatchObject({
      email: 'reader@example.org',
      firstName: 'Ada',
      subscribed: true,
    });
    expect((await client.contactBooks.list()).data?.some((b: { id: string }) => b.id === book.data!.id)).toBe(true);

    const domains = await client.domains.list();
    expect(domains.data?.map((d: { name: string }) => d.name)).toContain(DOMAIN);

    const missing = await client.emails.get('nope-not-here');
    // The SDK hands back useSend's error body as it is.
    expect(missing.error).toMatchObject({ error: { code: 'NOT_FOUND', message: 'Email not found' } });
  } finally {
    await new Promise((r) => server.close(r));
  }
});

it('writes email.queued, email.cancelled, email.suppressed and email.failed webhook events where those states change', async () => {
  const hook = await request(app.app)
    .post('/api/v1/webhooks')
    .set(auth)
    .send({ url: receiver.url, events: ['email.queued', 'email.cancelled', 'email.suppressed', 'email.failed'] });
  expect(hook.status).toBe(200);
  // Deliveries run concurrently, so arrival order is not event order: order by the event's time.
  const typesFor = (emailId: string) =>
    receiver.calls
      .map((r) => JSON.parse(r.body) as { type: string; createdAt: string; data?: { id?: string } })
      .filter((e) => e.data?.id === emailId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((e) => e.type);

  const queued = (
    await request(app.app)
      .post('/api/v1/emails')
      .set(auth)
      .send({ from: `a@${DOMAIN}`, to: 'q@example.org', subject: 'q', text: 'q' })
  ).body.emailId;
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const cancelled = (
    await request(app.app)
      .post('/api/v1/emails')
      .set(auth)
      .send({ from: `a@${DOMAIN}`, to: 'c@example.org', subject: 'c', text: 'c', scheduledAt: later })
  ).body.emailId;
  expect((await request(app.app).post(`/api/v1/emails/${cancelled}/cancel`).set(auth)).status).toBe(200);
  await request(app.app).post('/api/v1/suppressions').set(auth).send({ email: 'gone@example.org' });
  const suppressed = (
    await request(app.app)
      .post('/api/v1/emails')
      .set(auth)
      .send({ from: `a@${DOMAIN}`, to: 'gone@example.org', subject: 's', text: 's' })
  ).body.emailId;
  ses.setRule((req) =>
    req.destination.to.includes('reject@example.org') ? { kind: 'reject', message: 'Email address is not verified.' } : undefined,
  );
  const failed = (
    await request(app.app)
      .post('/api/v1/emails')
      .set(auth)
      .send({ from: `a@${DOMAIN}`, to: 'reject@example.org', subject: 'f', text: 'f' })
  ).body.emailId;

  // Both of the failed email's events, not just the last: their deliveries race each other.
  await waitFor(async () => typesFor(failed).includes('email.queued') && typesFor(failed).includes('email.failed'));
  await waitFor(
    async () =>
      typesFor(queued).includes('email.queued') &&
      typesFor(cancelled).includes('email.cancelled') &&
      typesFor(suppressed).includes('email.suppressed'),
  );
  ses.setRule(null);
  // A scheduled email reports nothing until something happens to it; each event arrives once.
  expect(typesFor(cancelled)).toEqual(['email.cancelled']);
  expect(typesFor(suppressed)).toEqual(['email.suppressed']);
  expect(typesFor(failed)).toEqual(['email.queued', 'email.failed']);
  expect(JSON.parse(receiver.calls.find((r) => JSON.parse(r.body).type === 'email.failed')!.body).data).toMatchObject({
    id: failed,
    status: 'FAILED',
    to: ['reject@example.org'],
    subject: 'f',
  });
});
