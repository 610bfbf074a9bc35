// The SMTP relay, the worker and the API together on one database and Redis prefix: a message
// written by an SMTP client (Nodemailer) with html, text, two attachments, an inline image,
// threading and custom headers, Cc and Bcc goes through the relay and the worker to SES (the fake
// SES endpoint, through the real AWS SDK) byte for byte as the client wrote it, plus our email id
// header; the envelope decides who receives it; GET /api/v1/emails shows it with its events.
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import request from 'supertest';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import type { Config } from '@mailrail/platform/config/schema';
import { generateDevCertificate, type DevCertificate } from '@mailrail/platform/tls/self-signed';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { waitFor as waitUntil } from '@mailrail/testing/wait-for';
import { createApp } from '../../apps/api/src/app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../../apps/api/src/deps';
import { closeSmtpDeps, createSmtpDeps, type SmtpDeps } from '../../apps/smtp/src/deps';
import { startSmtpRelay, type SmtpRelay } from '../../apps/smtp/src/relay';
import { closeWorkerDeps, createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import { startWorker, type RunningWorker } from '../../apps/worker/src/worker';

let databaseUrl: string;
let prefix: string;
let config: Config;
let ses: FakeSes;
let api: ApiDeps;
let app: ReturnType<typeof createApp>;
let smtp: SmtpDeps;
let relay: SmtpRelay;
let worker: WorkerDeps;
let running: RunningWorker;
let certificate: DevCertificate;
let apiKey: string;
const DOMAIN = 'smtp-e2e.example.com';

const waitFor = <T>(probe: () => Promise<T | null | undefined | false>) => waitUntil(probe, { timeoutMs: 20_000 });

beforeAll(async () => {
  [ses, certificate] = await Promise.all([startFakeSes(), generateDevCertificate('localhost')]);
  databaseUrl = await createTestDatabase();
  prefix = testRedisPrefix();
  config = testConfig(databaseUrl, prefix, { SES_ENDPOINT: ses.url, SES_RATE_LIMIT: '100', SEND_SWEEP_CRON: '* * * * * *' });
  api = createApiDeps(config);
  app = createApp(api);
  smtp = createSmtpDeps(config);
  relay = await startSmtpRelay(smtp, { host: '127.0.0.1', starttlsPort: 0, tlsPort: null, tls: certificate, serverName: 'localhost' });
  worker = createWorkerDeps(config);
  running = await startWorker(worker);
  const team = await createTeam(api.db, 'SMTP E2E');
  await insertDomain(api.db, config.SECRET, {
    teamId: team.id,
    name: DOMAIN,
    region: config.AWS_REGION,
    dkimSelector: config.DKIM_SELECTOR,
    verified: true,
  });
  apiKey = (await createApiKey(api.db, { teamId: team.id, permission: 'SENDING' })).apiKey;
});

afterAll(async () => {
  await relay?.stop(0);
  await running?.close();
  app?.close();
  await deleteRedisPrefix(api.redis, prefix).catch(() => undefined);
  await closeSmtpDeps(smtp);
  await closeWorkerDeps(worker);
  await closeApiDeps(api);
  await ses.close();
  await dropDatabase(databaseUrl);
});

// A 1x1 PNG for the inline image.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

it('delivers a client-written message to SES byte-faithful, to its envelope recipients, and lists it with its events', async () => {
  const raw = await new MailComposer({
    from: 'Shop <orders@smtp-e2e.example.com>',
    to: 'Ann <ann@example.org>',
    cc: 'Cy <cy@example.org>',
    bcc: 'audit@example.org',
    replyTo: 'help@smtp-e2e.example.com',
    subject: 'Your order 1042 — merci',
    messageId: '<order-1042@shop.example>',
    inReplyTo: '<question-7@shop.example>',
    references: ['<question-7@shop.example>'],
    list: { unsubscribe: 'https://shop.example/unsubscribe/ann' },
    headers: { 'X-Order-Id': '1042', 'X-Priority-Class': 'gold' },
    text: 'Thanks for your order.',
    html: '<p>Thanks for your order.</p><img src="cid:logo@shop">',
    attachments: [
      { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 invoice 1042'), contentType: 'application/pdf' },
      { filename: 'terms.txt', content: 'Terms and conditions\n' },
      { filename: 'logo.png', content: PNG, cid: 'logo@shop' },
    ],
  })
    .compile()
    .build();
  // Nodemailer keeps the Bcc recipient out of the headers; the envelope carries it.
  expect(raw.toString()).not.toMatch(/^Bcc:/im);

  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: relay.ports.starttls!,
    requireTLS: true,
    auth: { user: 'mailrail', pass: apiKey },
    tls: { ca: [certificate.cert] },
  });
  const info = await transport.sendMail({
    envelope: { from: 'orders@smtp-e2e.example.com', to: ['ann@example.org', 'cy@example.org', 'audit@example.org'] },
    raw,
  });
  transport.close();
  const emailId = /^250 2\.0\.0 OK ([0-9a-z]+)$/.exec(info.response)?.[1];
  expect(emailId).toBeDefined();

  // The worker sends it once: the client's bytes after our email id header, the envelope as Destination.
  const message = await waitFor(async () => ses.messages.find((m) => m.raw.includes(`X-Usesend-Email-ID: ${emailId}`)));
  expect(message.raw).toBe(`X-Usesend-Email-ID: ${emailId}\r\n${raw.toString('utf8')}`);
  expect(message.destination).toEqual({ to: ['ann@example.org'], cc: ['cy@example.org'], bcc: ['audit@example.org'] });
  // SES's sending identity is the From the relay checked, not whatever the raw message might name.
  expect(message.fromEmailAddress).toBe('orders@smtp-e2e.example.com');
  await waitFor(async () => (await api.db.email.findUnique({ where: { id: emailId } }))?.latestStatus === 'SENT');
  expect(ses.messages.filter((m) => m.raw.includes(`X-Usesend-Email-ID: ${emailId}`))).toHaveLength(1);
  // Once sent, the stored copy of the client's message is dropped, as attachments are.
  expect((await api.db.email.findUniqueOrThrow({ where: { id: emailId } })).rawMessage).toBeNull();

  const auth = { Authorization: `Bearer ${apiKey}` };
  const list = await request(app.app).get('/api/v1/emails').set(auth);
  expect(list.status).toBe(200);
  expect(list.body.data.find((e: { id: string }) => e.id === emailId)).toMatchObject({
    from: 'Shop <orders@smtp-e2e.example.com>',
    to: ['Ann <ann@example.org>'],
    cc: ['Cy <cy@example.org>'],
    bcc: ['audit@example.org'],
    replyTo: ['help@smtp-e2e.example.com'],
    subject: 'Your order 1042 — merci',
    latestStatus: 'SENT',
  });
  const got = await request(app.app).get(`/api/v1/emails/${emailId}`).set(auth);
  expect(got.body).toMatchObject({ html: '<p>Thanks for your order.</p><img src="cid:logo@shop">', text: 'Thanks for your order.' });
  expect(got.body.emailEvents.map((e: { status: string }) => e.status)).toEqual(['QUEUED', 'SENT']);
});
