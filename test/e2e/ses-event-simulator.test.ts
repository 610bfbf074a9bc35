// The local stack behaving like SES (issue 17): the API and the worker on one database and Redis
// prefix, SES being a loopback emulator (the fake SES) with SES_EVENT_SIMULATOR on. Every accepted
// message gets SES's events through the same processor as SNS notifications, and the test
// addresses bounce, complain, reply from holiday or stay delayed, as SES's mailbox simulator does.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Webhooks } from 'usesend-js';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { verifyWebhookSignature } from '@mailrail/domain/webhooks/signing';
import { type Config } from '@mailrail/platform/config/schema';
import { runCli } from '@mailrail/tools/cli/main';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { deleteRedisPrefix, redisEnvOf, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { waitFor as waitUntil } from '@mailrail/testing/wait-for';
import { createApp } from '../../apps/api/src/app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../../apps/api/src/deps';
import { closeWorkerDeps, createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import { startWorker, type RunningWorker } from '../../apps/worker/src/worker';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}
interface WebhookEvent {
  type: string;
  createdAt: string;
  data: { id: string; status: string; occurredAt: string; bounce?: { type: string; subType: string }; click?: { url: string } };
}

let databaseUrl: string;
let prefix: string;
let env: Record<string, string>;
let config: Config;
let ses: FakeSes;
let api: ApiDeps;
let app: ReturnType<typeof createApp>;
let worker: WorkerDeps;
let running: RunningWorker;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
let auth: { Authorization: string };
let secret: string;
const DOMAIN = 'sim.example.com';
const SIM = 'simulator.amazonses.com';

const waitFor = <T>(probe: () => Promise<T | null | undefined | false>, what?: string, timeoutMs = 20_000) =>
  waitUntil(probe, { timeoutMs, what });

/**
 * Webhook events of one email, each verified with the signing secret, in the order the events
 * happened (`data.occurredAt`, SES's timestamp). Not by `createdAt`, the time mailrail recorded
 * each one: SES's notifications may be processed out of order (on a loaded machine the Send
 * event's job can run after the Delivery's, due 300 ms later).
 */
function webhookEventsOf(emailId: string): WebhookEvent[] {
  return received
    .map((r) => {
      const signed = verifyWebhookSignature(
        secret,
        { signature: r.headers['x-usesend-signature'] as string, timestamp: r.headers['x-usesend-timestamp'] as string },
        r.body,
      );
      if (!signed) throw new Error(`unsigned webhook call: ${r.body}`);
      return new Webhooks(secret).constructEvent(r.body, { headers: r.headers as Record<string, string> }) as unknown as WebhookEvent;
    })
    .filter((e) => e.data.id === emailId)
    .sort((a, b) => a.data.occurredAt.localeCompare(b.data.occurredAt) || a.type.localeCompare(b.type));
}

const send = async (to: string | string[], extra: object = {}) => {
  const res = await request(app.app)
    .post('/api/v1/emails')
    .set(auth)
    .send({
      from: `Shop <orders@${DOMAIN}>`,
      to,
      subject: 'Simulated',
      html: '<p>Hi <a href="https://shop.example.com/offer">offer</a></p>',
      ...extra,
    });
  expect(res.status).toBe(200);
  return res.body.emailId as string;
};

beforeAll(async () => {
  ses = await startFakeSes();
  databaseUrl = await createTestDatabase();
  prefix = testRedisPrefix();
  env = {
    SES_ENDPOINT: ses.url,
    SES_EVENT_SIMULATOR: 'on',
    SES_EVENT_SIMULATOR_DELAY_MS: '300',
    SES_RATE_LIMIT: '100',
    SEND_SWEEP_CRON: '* * * * * *',
    CAMPAIGN_SCAN_INTERVAL_MS: '200',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };
  config = testConfig(databaseUrl, prefix, env);
  expect(config.sesEventSimulator).toBe(true);
  api = createApiDeps(config);
  app = createApp(api);
  worker = createWorkerDeps(config);
  running = await startWorker(worker);

  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  const team = await createTeam(api.db, 'Simulator');
  await insertDomain(api.db, config.SECRET, {
    teamId: team.id,
    name: DOMAIN,
    region: config.AWS_REGION,
    dkimSelector: config.DKIM_SELECTOR,
    verified: true,
  });
  auth = { Authorization: `Bearer ${(await createApiKey(api.db, { teamId: team.id })).apiKey}` };
  const hook = await request(app.app)
    .post('/api/v1/webhooks')
    .set(auth)
    .send({
      url: receiverUrl,
      events: [
        'email.sent',
        'email.delivered',
        'email.bounced',
        'email.complained',
        'email.delivery_delayed',
        'email.opened',
        'email.clicked',
      ],
    });
  expect(hook.status).toBe(200);
  secret = hook.body.secret;
});

afterAll(async () => {
  await running.close();
  app.close();
  await new Promise((r) => receiver.close(r));
  await deleteRedisPrefix(api.redis, prefix).catch(() => undefined);
  await closeWorkerDeps(worker);
  await closeApiDeps(api);
  await ses.close();
  await dropDatabase(databaseUrl);
});

it('each test address yields its status, events, suppression, contact state, counters and signed webhooks', async () => {
  const book = await request(app.app).post('/api/v1/contactBooks').set(auth).send({ name: 'Testers' });
  const contacts: Record<string, string> = {};
  for (const email of ['plain@example.org', 'bounce@example.com', `complaint@${SIM}`]) {
    contacts[email] = (
      await request(app.app).post(`/api/v1/contactBooks/${book.body.id}/contacts`).set(auth).send({ email })
    ).body.contactId;
  }

  const ids = {
    plain: await send('plain@example.org'),
    success: await send(`success@${SIM}`),
    bounce: await send('bounce@example.com'), // the same local part at any domain
    suppressionlist: await send(`suppressionlist@${SIM}`),
    complaint: await send(`complaint@${SIM}`),
    ooto: await send(`ooto@${SIM}`),
    delay: await send(`delay@${SIM}`),
    // Two recipients: only the one that bounces is suppressed; the bounce outranks the delivery.
    mixed: await send(['mixed-ok@example.org', 'Bounce+mixed@example.net']),
  };
  // The final status and the webhooks; the email's events are QUEUED plus one per webhook.
  const expected: Record<keyof typeof ids, { status: string; webhooks: string[] }> = {
    plain: { status: 'DELIVERED', webhooks: ['email.sent', 'email.delivered'] },
    success: { status: 'DELIVERED', webhooks: ['email.sent', 'email.delivered'] },
    bounce: { status: 'BOUNCED', webhooks: ['email.sent', 'email.bounced'] },
    suppressionlist: { status: 'BOUNCED', webhooks: ['email.sent', 'email.bounced'] },
    complaint: { status: 'COMPLAINED', webhooks: ['email.sent', 'email.delivered', 'email.complained'] },
    ooto: { status: 'DELIVERED', webhooks: ['email.sent', 'email.delivered'] },
    delay: { status: 'DELIVERY_DELAYED', webhooks: ['email.sent', 'email.delivery_delayed'] },
    mixed: { status: 'BOUNCED', webhooks: ['email.sent', 'email.bounced', 'email.delivered'] },
  };
  const asStatus = (webhook: string) => webhook.slice('email.'.length).toUpperCase();

  for (const [name, id] of Object.entries(ids) as [keyof typeof ids, string][]) {
    await waitFor(async () => webhookEventsOf(id).length >= expected[name].webhooks.length, `webhooks of ${name}`);
    const email = await api.db.email.findUniqueOrThrow({ where: { id } });
    expect({ name, status: email.latestStatus }).toEqual({ name, status: expected[name].status });
    expect({
      name,
      webhooks: webhookEventsOf(id)
        .map((e) => e.type)
        .sort(),
    }).toEqual({ name, webhooks: [...expected[name].webhooks].sort() });
    const got = await request(app.app).get(`/api/v1/emails/${id}`).set(auth);
    // One event per status: SES's Send event joins the SENT event the worker wrote, not a second one.
    const statuses = got.body.emailEvents.map((e: { status: string }) => e.status).sort();
    expect({ name, statuses }).toEqual({ name, statuses: ['QUEUED', ...expected[name].webhooks.map(asStatus)].sort() });
  }
  const bounceOf = (id: string) => webhookEventsOf(id).find((e) => e.type === 'email.bounced')!.data.bounce;
  expect(bounceOf(ids.bounce)).toMatchObject({ type: 'Permanent', subType: 'General' });
  expect(bounceOf(ids.suppressionlist)).toMatchObject({ type: 'Permanent', subType: 'OnAccountSuppressionList' });

  // Suppression: exactly the bounced and complained recipients.
  const suppressions = await api.db.suppression.findMany({ orderBy: { email: 'asc' } });
  expect(suppressions.map((s) => [s.email, s.reason])).toEqual([
    ['bounce+mixed@example.net', 'HARD_BOUNCE'],
    ['bounce@example.com', 'HARD_BOUNCE'],
    [`complaint@${SIM}`, 'COMPLAINT'],
    [`suppressionlist@${SIM}`, 'HARD_BOUNCE'],
  ]);
  const contact = (email: string) => api.db.contact.findUniqueOrThrow({ where: { id: contacts[email] } });
  expect(await contact('plain@example.org')).toMatchObject({ subscribed: true, unsubscribeReason: null });
  expect(await contact('bounce@example.com')).toMatchObject({ subscribed: false, unsubscribeReason: 'BOUNCED' });
  expect(await contact(`complaint@${SIM}`)).toMatchObject({ subscribed: false, unsubscribeReason: 'COMPLAINED' });

  // The delay does not resolve by itself; the holiday mailbox answered the sender.
  expect(ses.messages.filter((m) => m.raw.includes('Subject: Out of office: Simulated')).map((m) => m.destination.to)).toEqual([
    [`Shop <orders@${DOMAIN}>`],
  ]);

  // Analytics moved, once per email: 8 sent; 5 delivered (plain, success, complaint, ooto and the
  // mixed one's other recipient); 3 bounced; 1 complaint.
  const series = await request(app.app).get('/api/v1/analytics/email-time-series?days=7').set(auth);
  expect(series.body.totalCounts).toEqual({ sent: 8, delivered: 5, opened: 0, clicked: 0, bounced: 3, complained: 1 });
  const reputation = await request(app.app).get('/api/v1/analytics/reputation-metrics').set(auth);
  expect(reputation.body).toMatchObject({ delivered: 5, hardBounced: 3, complained: 1 });
});

it('a campaign to a book with one bounce@ and one complaint@ contact ends with the right counters and both suppressed', async () => {
  const book = await request(app.app).post('/api/v1/contactBooks').set(auth).send({ name: 'Campaign book' });
  for (const email of ['bounce+campaign@example.org', 'complaint+campaign@example.org']) {
    expect((await request(app.app).post(`/api/v1/contactBooks/${book.body.id}/contacts`).set(auth).send({ email })).status).toBe(200);
  }
  const created = await request(app.app)
    .post('/api/v1/campaigns')
    .set(auth)
    .send({
      name: 'Sim',
      from: `news@${DOMAIN}`,
      subject: 'News',
      html: '<p>News <a href="{{usesend_unsubscribe_url}}">unsubscribe</a></p>',
      contactBookId: book.body.id,
      sendNow: true,
    });
  expect(created.status).toBe(200);
  const id: string = created.body.id;

  const campaign = await waitFor(async () => {
    const c = await api.db.campaign.findUniqueOrThrow({ where: { id } });
    return c.status === 'SENT' && c.complained === 1 && c.bounced === 1 && c;
  }, 'campaign counters');
  expect(campaign).toMatchObject({
    total: 2,
    sent: 2,
    delivered: 1,
    bounced: 1,
    hardBounced: 1,
    complained: 1,
    unsubscribed: 2,
    opened: 0,
    clicked: 0,
  });
  const suppressed = await api.db.suppression.findMany({
    where: { email: { in: ['bounce+campaign@example.org', 'complaint+campaign@example.org'] } },
    orderBy: { email: 'asc' },
  });
  expect(suppressed.map((s) => s.reason)).toEqual(['HARD_BOUNCE', 'COMPLAINT']);
  const contacts = await api.db.contact.findMany({ where: { contactBookId: book.body.id }, orderBy: { email: 'asc' } });
  expect(contacts.map((c) => [c.email, c.subscribed, c.unsubscribeReason])).toEqual([
    ['bounce+campaign@example.org', false, 'BOUNCED'],
    ['complaint+campaign@example.org', false, 'COMPLAINED'],
  ]);
});

describe('npm run cli -- simulate open|click', () => {
  const cliEnv = (extra: Record<string, string> = {}) => ({
    NODE_ENV: 'test',
    DATABASE_URL: config.DATABASE_URL,
    ...redisEnvOf(config.redis),
    REDIS_PREFIX: prefix,
    ...env,
    ...extra,
  });
  let stderr: jest.SpyInstance;
  beforeEach(() => {
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  });
  afterEach(() => jest.restoreAllMocks());

  it('records an open and a click through the processor: status, counters and webhooks', async () => {
    const id = await send('reader@example.org');
    await waitFor(async () => (await api.db.email.findUniqueOrThrow({ where: { id } })).latestStatus === 'DELIVERED', 'delivery');

    expect(await runCli(['simulate', 'open', '--email', id], cliEnv())).toBe(0);
    await waitFor(async () => (await api.db.email.findUniqueOrThrow({ where: { id } })).latestStatus === 'OPENED', 'open');
    expect(await runCli(['simulate', 'click', '--email', id], cliEnv())).toBe(0);
    // All four, not only the click's: the Send event's may be recorded last (see webhookEventsOf).
    await waitFor(async () => webhookEventsOf(id).length >= 4, 'the four webhooks');

    expect((await api.db.email.findUniqueOrThrow({ where: { id } })).latestStatus).toBe('CLICKED');
    expect(webhookEventsOf(id).map((e) => e.type)).toEqual(['email.sent', 'email.delivered', 'email.opened', 'email.clicked']);
    // The click follows the email's first link.
    expect(webhookEventsOf(id).find((e) => e.type === 'email.clicked')!.data.click).toMatchObject({
      url: 'https://shop.example.com/offer',
    });
    const series = await request(app.app).get('/api/v1/analytics/email-time-series?days=7').set(auth);
    expect(series.body.totalCounts).toMatchObject({ opened: 1, clicked: 1 });
  });

  it('is refused when the simulator is off, for an unknown email, and for an email not sent yet', async () => {
    const id = await send('other@example.org');
    await waitFor(async () => (await api.db.email.findUniqueOrThrow({ where: { id } })).latestStatus === 'DELIVERED', 'delivery');
    const before = await api.db.emailEvent.count({ where: { emailId: id } });

    expect(await runCli(['simulate', 'open', '--email', id], cliEnv({ SES_EVENT_SIMULATOR: 'off' }))).toBe(2);
    expect(stderr.mock.calls.join('')).toContain('the SES event simulator is off');
    expect(await runCli(['simulate', 'open', '--email', id], cliEnv({ SES_EVENT_SIMULATOR: 'auto' }))).toBe(2); // NODE_ENV=test
    expect(
      await runCli(
        ['simulate', 'open', '--email', id],
        cliEnv({ NODE_ENV: 'production', SECRET: 'e2e-secret-4c9a1f7b3d8e2a6c5b0f9d1e7a3c8b4f' }),
      ),
    ).toBe(2);
    expect(stderr.mock.calls.join('')).toContain('SES_EVENT_SIMULATOR: must not be on in production');
    expect(await runCli(['simulate', 'click', '--email', 'no-such-email'], cliEnv())).toBe(2);
    expect(stderr.mock.calls.join('')).toContain('email no-such-email does not exist');

    const scheduled = await send('later@example.org', { scheduledAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(await runCli(['simulate', 'open', '--email', scheduled], cliEnv())).toBe(2);
    expect(stderr.mock.calls.join('')).toContain(`email ${scheduled} has not been sent yet (status SCHEDULED)`);

    await new Promise((r) => setTimeout(r, 500));
    expect(await api.db.emailEvent.count({ where: { emailId: id } })).toBe(before);
  });
});
