import express from 'express';
import request from 'supertest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMetrics } from '@mailrail/platform/metrics/metrics';
import { newId } from '@mailrail/platform/ids';
import { processSesEventJob, SesEventEmailNotFound, type SesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { queueNames } from '@mailrail/platform/queue/queues';
import { foldCounterDeltas } from '@mailrail/domain/ses-events/counter-deltas';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { rememberSnsTopic } from '@mailrail/domain/ses-events/sns-topics';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { errorHandler } from '../http/errors';
import { fetchHttpGet } from './http-fetch';
import { sesNotificationRoutes } from './routes';
import { createSnsVerifier, SnsCertificateUnavailable } from './sns-verifier';
import { createTestSnsSigner, sesEventMessage, TEST_TOPIC_ARN, type SnsEnvelope, type TestSnsSigner } from './testing/sns-signer';

// The SNS side is played by the test: messages are signed with a self-signed certificate that the
// injected HTTP port serves at an SNS URL (the only thing mocked: amazonaws.com is not reachable).
// Processing runs the same core function the worker runs, on the job the endpoint queued.

let api: TestApi;
let sns: TestSnsSigner;
let app: express.Express;
const httpCalls: string[] = [];
const certAnswer: { status: number; body: string } | null = null;

const metrics = createMetrics('api');
const rejected = async (reason: string) => (await metrics.snsRejected.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

beforeAll(async () => {
  [api, sns] = await Promise.all([startTestApi(), createTestSnsSigner()]);
  // The test topic is ours the way a real one is: `ses setup` stored it (SNS_TOPIC_ARNS is unset).
  await rememberSnsTopic(api.deps.db, TEST_TOPIC_ARN, 'us-east-1');
  app = express();
  app.use(
    '/api/ses/notifications',
    sesNotificationRoutes(api.deps, {
      metrics,
      httpGet: async (url) => {
        httpCalls.push(url);
        if (url === sns.certUrl) return certAnswer ?? { status: 200, body: sns.certPem };
        return { status: 200, body: '<ConfirmSubscriptionResponse/>' };
      },
    }),
  );
  app.use(errorHandler);
});
afterAll(async () => {
  await api.close();
});

const queue = () => api.deps.queues.get(queueNames.sesEvents);
const post = (envelope: SnsEnvelope | string) =>
  request(app)
    .post('/api/ses/notifications')
    .set('Content-Type', 'text/plain; charset=UTF-8')
    .send(typeof envelope === 'string' ? envelope : JSON.stringify(envelope));

/** Posts like SNS, then runs the queued job like the worker, and the counter fold (its periodic job). */
async function deliver(envelope: SnsEnvelope) {
  const res = await post(envelope);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ data: 'Notification queued' });
  const job = await queue().getJob(envelope.MessageId);
  expect(job).toBeDefined();
  const outcome = await processSesEventJob({ db: api.deps.db }, job!.data as SesEventJob);
  await foldCounterDeltas(prismaExecutor(api.deps.db), 1000);
  return outcome;
}

const event = (
  type: string,
  sesMessageId: string,
  opts: Parameters<typeof sesEventMessage>[1] extends infer O ? Omit<O, 'sesMessageId'> : never = {},
) => sns.notification(sesEventMessage(type, { sesMessageId, ...opts }));

interface Fixture {
  team: TestTeam;
  domainId: number;
}

async function fixture(): Promise<Fixture> {
  const team = await api.newTeam();
  const domain = await api.addDomain(team.teamId, `d${newId(8)}.example.com`);
  return { team, domainId: domain.id };
}

async function newEmail(
  f: Fixture,
  opts: { sesEmailId?: string | null; campaignId?: string; contactId?: string; to?: string; cc?: string[]; bcc?: string[] } = {},
) {
  const id = newId();
  await api.deps.db.email.create({
    data: {
      id,
      teamId: f.team.teamId,
      domainId: f.domainId,
      from: 'hello@example.com',
      to: [opts.to ?? 'to@example.org'],
      cc: opts.cc ?? [],
      bcc: opts.bcc ?? [],
      subject: 'Hi',
      html: '<p>hi</p>',
      latestStatus: 'SENT',
      sesEmailId: opts.sesEmailId === undefined ? `ses-${newId(12)}` : opts.sesEmailId,
      campaignId: opts.campaignId ?? null,
      contactId: opts.contactId ?? null,
    },
  });
  return api.deps.db.email.findUniqueOrThrow({ where: { id } });
}

const statusOf = async (id: string) => (await api.deps.db.email.findUniqueOrThrow({ where: { id } })).latestStatus;
const eventsOf = (id: string) => api.deps.db.emailEvent.findMany({ where: { emailId: id }, orderBy: { id: 'asc' } });
async function usage(teamId: number) {
  await foldCounterDeltas(prismaExecutor(api.deps.db), 1000); // the worker's periodic fold
  const rows = await api.deps.db.dailyEmailUsage.findMany({ where: { teamId } });
  const sum = { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, hardBounced: 0, complained: 0 };
  for (const r of rows) for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += r[k];
  return { rows, sum };
}

describe('SES events through SNS', () => {
  it('maps every event type to its status, event row and counters', async () => {
    const f = await fixture();
    const cases: [string, string][] = [
      ['Send', 'SENT'],
      ['Delivery', 'DELIVERED'],
      ['Bounce', 'BOUNCED'],
      ['Complaint', 'COMPLAINED'],
      ['Reject', 'REJECTED'],
      ['DeliveryDelay', 'DELIVERY_DELAYED'],
      ['Open', 'OPENED'],
      ['Click', 'CLICKED'],
      ['Rendering Failure', 'RENDERING_FAILURE'],
    ];
    for (const [type, status] of cases) {
      const email = await newEmail(f, { to: `${type.replace(' ', '').toLowerCase()}@example.org` });
      await api.deps.db.email.update({ where: { id: email.id }, data: { latestStatus: 'QUEUED' } });
      const message = sesEventMessage(type, { sesMessageId: email.sesEmailId!, timestamp: '2026-03-04T05:06:07.000Z' });
      expect(await deliver(sns.notification(message))).toBe('processed');
      expect(await statusOf(email.id)).toBe(status);
      const events = await eventsOf(email.id);
      expect(events).toHaveLength(1);
      expect(events[0].status).toBe(status);
      // The SES detail sub-object is the event's data, and the event keeps SES's time.
      const detailKey = Object.keys(message).find((k) => k !== 'eventType' && k !== 'mail')!;
      expect(events[0].data).toEqual(message[detailKey]);
      expect(events[0].createdAt.toISOString()).toBe('2026-03-04T05:06:07.000Z');
    }
    const { rows, sum } = await usage(f.team.teamId);
    expect(sum).toEqual({ sent: 1, delivered: 1, opened: 1, clicked: 1, bounced: 1, hardBounced: 1, complained: 1 });
    expect(rows.every((r) => r.domainId === f.domainId && r.type === 'TRANSACTIONAL')).toBe(true);
    // Counted on the UTC day the event happened.
    expect([...new Set(rows.map((r) => r.date))]).toEqual(['2026-03-04']);
    const cumulated = await api.deps.db.cumulatedMetrics.findUniqueOrThrow({
      where: { teamId_domainId: { teamId: f.team.teamId, domainId: f.domainId } },
    });
    expect(cumulated).toMatchObject({ delivered: 1, hardBounced: 1, complained: 1 });
  });

  it('accepts the notification format (notificationType) and SignatureVersion 2', async () => {
    const f = await fixture();
    const email = await newEmail(f);
    const envelope = sns.notification(sesEventMessage('Delivery', { sesMessageId: email.sesEmailId!, format: 'notification' }), {
      signatureVersion: '2',
    });
    expect(await deliver(envelope)).toBe('processed');
    expect(await statusOf(email.id)).toBe('DELIVERED');
  });

  it('records a Subscription event without changing the status', async () => {
    const f = await fixture();
    const email = await newEmail(f);
    await deliver(event('Delivery', email.sesEmailId!));
    expect(await deliver(event('Subscription', email.sesEmailId!))).toBe('processed');
    expect(await statusOf(email.id)).toBe('DELIVERED');
    const events = await eventsOf(email.id);
    expect(events.map((e) => e.status)).toEqual(['DELIVERED', 'DELIVERED']);
    expect(events[1].data).toMatchObject({ eventType: 'Subscription', contactList: 'list' });
  });

  it('counts the same notification once, however often it arrives', async () => {
    const f = await fixture();
    const email = await newEmail(f);
    const envelope = event('Delivery', email.sesEmailId!);
    expect(await deliver(envelope)).toBe('processed');
    // SNS redelivers: the job id dedupes while the job is kept, the SesNotification row after.
    expect((await post(envelope)).status).toBe(200);
    const job = await queue().getJob(envelope.MessageId);
    expect(await processSesEventJob({ db: api.deps.db }, job!.data as SesEventJob)).toBe('duplicate');
    await job!.remove();
    expect(await deliver(envelope)).toBe('duplicate');
    expect(await eventsOf(email.id)).toHaveLength(1);
    expect((await usage(f.team.teamId)).sum.delivered).toBe(1);
  });

  it('counts an email once per status: repeated opens are events, not extra counts', async () => {
    const f = await fixture();
    const email = await newEmail(f);
    for (let i = 0; i < 3; i++) await deliver(event('Open', email.sesEmailId!));
    expect(await eventsOf(email.id)).toHaveLength(3);
    expect((await usage(f.team.teamId)).sum.opened).toBe(1);
  });

  it('never moves the status back: Delivery after Open stays OPENED, any order converges', async () => {
    const f = await fixture();
    const a = await newEmail(f);
    const b = await newEmail(f);
    for (const t of ['Send', 'Delivery', 'Open']) await deliver(event(t, a.sesEmailId!));
    for (const t of ['Open', 'Delivery', 'Send', 'Delivery']) await deliver(event(t, b.sesEmailId!));
    expect(await statusOf(a.id)).toBe('OPENED');
    expect(await statusOf(b.id)).toBe('OPENED');
    const { sum } = await usage(f.team.teamId);
    expect(sum).toMatchObject({ sent: 2, delivered: 2, opened: 2 });
  });

  it('leaves our own final decisions alone: an event does not overwrite FAILED', async () => {
    const f = await fixture();
    const email = await newEmail(f);
    await api.deps.db.email.update({ where: { id: email.id }, data: { latestStatus: 'FAILED' } });
    await deliver(event('Delivery', email.sesEmailId!));
    expect(await statusOf(email.id)).toBe('FAILED');
    expect(await eventsOf(email.id)).toHaveLength(1);
  });

  it('updates campaign counters once per email per status, as MARKETING usage', async () => {
    const f = await fixture();
    const campaign = await api.deps.db.campaign.create({
      data: { id: newId(), teamId: f.team.teamId, name: 'c', from: 'a@example.com', subject: 's' },
    });
    const email = await newEmail(f, { campaignId: campaign.id });
    for (const t of ['Send', 'Delivery', 'Delivery', 'Open', 'Click', 'Click']) await deliver(event(t, email.sesEmailId!));
    const c = await api.deps.db.campaign.findUniqueOrThrow({ where: { id: campaign.id } });
    // Campaign.sent belongs to the campaign engine (recordOutcomes); the Send event leaves it alone.
    expect(c).toMatchObject({ sent: 0, delivered: 1, opened: 1, clicked: 1, bounced: 0 });
    const { rows } = await usage(f.team.teamId);
    expect(rows.every((r) => r.type === 'MARKETING')).toBe(true);
  });
});

describe('suppression from bounces and complaints', () => {
  async function books(teamId: number, email: string) {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const book = await api.deps.db.contactBook.create({ data: { id: newId(), teamId, name: `b${i}` } });
      const contact = await api.deps.db.contact.create({ data: { id: newId(), contactBookId: book.id, email } });
      ids.push(contact.id);
    }
    return ids;
  }

  it('a permanent bounce suppresses the bounced recipients and unsubscribes them in every book of the team', async () => {
    const f = await fixture();
    const other = await fixture();
    const contacts = await books(f.team.teamId, 'gone@example.org');
    const [otherContact] = await books(other.team.teamId, 'gone@example.org');
    const campaign = await api.deps.db.campaign.create({
      data: { id: newId(), teamId: f.team.teamId, name: 'c', from: 'a@example.com', subject: 's' },
    });
    const email = await newEmail(f, { to: 'gone@example.org', campaignId: campaign.id, contactId: contacts[0] });
    await deliver(event('Bounce', email.sesEmailId!, { detail: { bouncedRecipients: [{ emailAddress: 'Gone@Example.org' }] } }));

    const suppressed = await api.deps.db.suppression.findMany({ where: { email: 'gone@example.org' } });
    expect(suppressed).toHaveLength(1);
    expect(suppressed[0]).toMatchObject({ teamId: f.team.teamId, reason: 'HARD_BOUNCE', source: email.id });
    for (const id of contacts) {
      expect(await api.deps.db.contact.findUniqueOrThrow({ where: { id } })).toMatchObject({
        subscribed: false,
        unsubscribeReason: 'BOUNCED',
      });
    }
    // Another team's contact with the same address is not touched.
    expect(await api.deps.db.contact.findUniqueOrThrow({ where: { id: otherContact } })).toMatchObject({
      subscribed: true,
      unsubscribeReason: null,
    });
    expect(await api.deps.db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).toMatchObject({
      bounced: 1,
      hardBounced: 1,
      unsubscribed: 1,
    });
  });

  it('a transient bounce counts as bounced but suppresses nobody', async () => {
    const f = await fixture();
    const email = await newEmail(f, { to: 'full@example.org' });
    await deliver(
      event('Bounce', email.sesEmailId!, {
        detail: { bounceType: 'Transient', bouncedRecipients: [{ emailAddress: 'full@example.org' }] },
      }),
    );
    expect(await api.deps.db.suppression.count({ where: { teamId: f.team.teamId } })).toBe(0);
    expect((await usage(f.team.teamId)).sum).toMatchObject({ bounced: 1, hardBounced: 0 });
    expect(await statusOf(email.id)).toBe('BOUNCED');
  });

  it('a complaint suppresses the complained recipients with reason COMPLAINT', async () => {
    const f = await fixture();
    const contacts = await books(f.team.teamId, 'angry@example.org');
    const email = await newEmail(f, { to: 'angry@example.org' });
    await deliver(event('Complaint', email.sesEmailId!, { detail: { complainedRecipients: [{ emailAddress: 'angry@example.org' }] } }));
    expect(await api.deps.db.suppression.findFirstOrThrow({ where: { teamId: f.team.teamId } })).toMatchObject({
      email: 'angry@example.org',
      reason: 'COMPLAINT',
    });
    expect(await api.deps.db.contact.findUniqueOrThrow({ where: { id: contacts[1] } })).toMatchObject({
      subscribed: false,
      unsubscribeReason: 'COMPLAINED',
    });
  });
});

describe("suppression is limited to the email's own recipients", () => {
  it('a bounce naming a non-recipient address suppresses nothing for it while the real recipients are suppressed', async () => {
    const f = await fixture();
    const [bystander] = await (async () => {
      const book = await api.deps.db.contactBook.create({ data: { id: newId(), teamId: f.team.teamId, name: 'b' } });
      return [await api.deps.db.contact.create({ data: { id: newId(), contactBookId: book.id, email: 'ceo@victim.example' } })];
    })();
    const email = await newEmail(f, { to: '"Real" <Real@Example.org>', cc: ['copy@example.org'], bcc: ['Hidden@Example.org'] });
    await deliver(
      event('Bounce', email.sesEmailId!, {
        detail: {
          bouncedRecipients: [
            { emailAddress: 'real@example.org' },
            { emailAddress: 'COPY@example.org' },
            { emailAddress: 'hidden@example.org' },
            { emailAddress: 'ceo@victim.example' },
          ],
        },
      }),
    );
    const suppressed = await api.deps.db.suppression.findMany({ where: { teamId: f.team.teamId }, orderBy: { email: 'asc' } });
    expect(suppressed.map((s) => s.email)).toEqual(['copy@example.org', 'hidden@example.org', 'real@example.org']);
    expect(await api.deps.db.contact.findUniqueOrThrow({ where: { id: bystander.id } })).toMatchObject({
      subscribed: true,
      unsubscribeReason: null,
    });
  });

  it('a complaint that names only strangers suppresses nobody', async () => {
    const f = await fixture();
    const email = await newEmail(f, { to: 'reader@example.org' });
    await deliver(
      event('Complaint', email.sesEmailId!, { detail: { complainedRecipients: [{ emailAddress: 'someone-else@example.org' }] } }),
    );
    expect(await api.deps.db.suppression.count({ where: { teamId: f.team.teamId } })).toBe(0);
  });
});

describe('matching the email', () => {
  it('falls back to the X-Usesend-Email-ID header and back-fills the SES id', async () => {
    const f = await fixture();
    const email = await newEmail(f, { sesEmailId: null });
    expect(await deliver(event('Delivery', 'ses-late-1', { emailId: email.id }))).toBe('processed');
    const row = await api.deps.db.email.findUniqueOrThrow({ where: { id: email.id } });
    expect(row).toMatchObject({ sesEmailId: 'ses-late-1', latestStatus: 'DELIVERED' });
    // The legacy header works too.
    const legacy = await newEmail(f, { sesEmailId: null });
    expect(await deliver(event('Delivery', 'ses-late-2', { emailId: legacy.id, legacyHeader: true }))).toBe('processed');
    expect(await statusOf(legacy.id)).toBe('DELIVERED');
  });

  it('records the acceptance a Send event reports when it arrives, before the queue runs, and the queued job adds its details', async () => {
    // An email in doubt: claimed, its SES call started, its worker gone before recording SES's answer.
    const f = await fixture();
    const email = await newEmail(f, { sesEmailId: null });
    await api.deps.db.email.update({
      where: { id: email.id },
      data: { latestStatus: 'QUEUED', sendLeaseUntil: new Date(Date.now() + 300_000), sesCallStartedAt: new Date() },
    });
    const envelope = event('Send', 'ses-in-doubt-1', { emailId: email.id });
    expect((await post(envelope)).status).toBe(200);
    // Already SENT, with no SES event processed yet: a worker cannot claim it again.
    const row = await api.deps.db.email.findUniqueOrThrow({ where: { id: email.id } });
    expect(row).toMatchObject({ sesEmailId: 'ses-in-doubt-1', latestStatus: 'SENT', sendLeaseUntil: null, sesCallStartedAt: null });
    expect((await eventsOf(email.id)).map((e) => [e.status, e.data])).toEqual([['SENT', { messageId: 'ses-in-doubt-1' }]]);

    const job = (await queue().getJob(envelope.MessageId))!.data as SesEventJob;
    expect(await processSesEventJob({ db: api.deps.db }, job)).toBe('processed');
    const events = await eventsOf(email.id);
    expect(events.map((e) => e.status)).toEqual(['SENT']);
    expect(events[0].data).toMatchObject({ messageId: 'ses-in-doubt-1' });
    expect((await usage(f.team.teamId)).sum.sent).toBe(1);
  });

  it('does not let a header claim an email that already has another SES id', async () => {
    const f = await fixture();
    const email = await newEmail(f);
    expect(await deliver(event('Delivery', 'ses-someone-else', { emailId: email.id }))).toBe('unmatched');
    expect(await statusOf(email.id)).toBe('SENT');
  });

  it('retries an event for an unknown email, then records it as unmatched on the last attempt', async () => {
    const envelope = event('Delivery', 'ses-unknown');
    expect((await post(envelope)).status).toBe(200);
    const job = (await queue().getJob(envelope.MessageId))!.data as SesEventJob;
    await expect(processSesEventJob({ db: api.deps.db }, job, { lastAttempt: false })).rejects.toBeInstanceOf(SesEventEmailNotFound);
    expect(await api.deps.db.sesNotification.count({ where: { messageId: envelope.MessageId } })).toBe(0);
    expect(await processSesEventJob({ db: api.deps.db }, job, { lastAttempt: true })).toBe('unmatched');
    expect(await api.deps.db.sesNotification.count({ where: { messageId: envelope.MessageId } })).toBe(1);
  });
});

describe('forged and malformed posts are refused and write nothing', () => {
  async function expectNothingWritten(envelope: SnsEnvelope | string, status: number, code: string) {
    const before = await queue().count();
    const res = await post(envelope);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(typeof res.body.error.message).toBe('string');
    expect(await queue().count()).toBe(before);
    if (typeof envelope !== 'string' && envelope.MessageId) {
      expect(await queue().getJob(envelope.MessageId)).toBeUndefined();
    }
    expect(await api.deps.db.sesNotification.count()).toBe(0);
    return res;
  }

  beforeEach(async () => {
    await api.deps.db.sesNotification.deleteMany();
  });

  it('refuses a tampered message (signature no longer matches)', async () => {
    const envelope = event('Delivery', 'ses-x');
    const message = JSON.parse(envelope.Message);
    message.mail.messageId = 'ses-other';
    await expectNothingWritten({ ...envelope, Message: JSON.stringify(message) }, 403, 'FORBIDDEN');
  });

  it('refuses a bad signature', async () => {
    const envelope = event('Delivery', 'ses-x');
    await expectNothingWritten({ ...envelope, Signature: Buffer.from('nope').toString('base64') }, 403, 'FORBIDDEN');
  });

  it('refuses a certificate URL that is not an SNS host, without fetching it', async () => {
    httpCalls.length = 0;
    for (const certUrl of [
      'https://evil.example.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
      'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
      'https://sns.us-east-1.amazonaws.com.evil.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
    ]) {
      await expectNothingWritten(sns.notification(sesEventMessage('Delivery', { sesMessageId: 'x' }), { certUrl }), 403, 'FORBIDDEN');
    }
    expect(httpCalls).toEqual([]);
  });

  it('refuses malformed JSON, a missing field, and a Message that is not JSON', async () => {
    await expectNothingWritten('{"Type": ', 400, 'BAD_REQUEST');
    const { Signature: _s, ...unsigned } = event('Delivery', 'ses-x');
    const res = await expectNothingWritten(unsigned as SnsEnvelope, 400, 'BAD_REQUEST');
    expect(res.body.error.issues[0].path).toEqual(['Signature']);
    await expectNothingWritten(sns.notification('not json at all'), 400, 'BAD_REQUEST');
  });

  it('refuses a body over 512 KB with 413 before reading it as SNS', async () => {
    await expectNothingWritten('x'.repeat(600 * 1024), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a signed confirmation whose SubscribeURL is not an SNS host, without calling it', async () => {
    httpCalls.length = 0;
    await expectNothingWritten(sns.subscriptionConfirmation('https://evil.example.com/?Action=ConfirmSubscription'), 400, 'BAD_REQUEST');
    expect(httpCalls.filter((u) => u.includes('evil'))).toEqual([]);
  });

  it('answers 503 when the certificate cannot be fetched, and fetches it again next time', async () => {
    const fresh = express();
    const calls: string[] = [];
    let fail = true;
    fresh.use(
      '/n',
      sesNotificationRoutes(api.deps, {
        httpGet: async (url) => (calls.push(url), fail ? { status: 500, body: 'oops' } : { status: 200, body: sns.certPem }),
      }),
    );
    fresh.use(errorHandler);
    const envelope = event('Delivery', 'ses-x');
    const first = await request(fresh).post('/n').set('Content-Type', 'text/plain').send(JSON.stringify(envelope));
    expect(first.status).toBe(503);
    fail = false;
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await request(fresh)
            .post('/n')
            .set('Content-Type', 'text/plain')
            .send(JSON.stringify(event('Delivery', 'ses-x')))
        ).status,
      ).toBe(200);
    }
    // Fetched once after the failure, then served from the cache.
    expect(calls).toEqual([sns.certUrl, sns.certUrl]);
  });
});

describe('message age', () => {
  it('refuses a message whose signed Timestamp is older than SNS_MAX_MESSAGE_AGE_SECONDS, or far in the future', async () => {
    const f = await fixture();
    const email = await newEmail(f);
    const before = await rejected('stale');
    const fresh = event('Delivery', email.sesEmailId!);
    const old = sns.sign({
      ...fresh,
      Timestamp: new Date(Date.now() - (api.config.SNS_MAX_MESSAGE_AGE_SECONDS + 60) * 1000).toISOString(),
    });
    const res = await post(old);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'SNS message Timestamp is too old or in the future' });
    expect(await queue().getJob(old.MessageId)).toBeUndefined();
    const future = sns.sign({ ...fresh, MessageId: newId(), Timestamp: new Date(Date.now() + 3600_000).toISOString() });
    expect((await post(future)).status).toBe(403);
    expect(await rejected('stale')).toBe(before + 2);
    // A few minutes old is normal (SNS retries): accepted.
    const retried = sns.sign({ ...fresh, MessageId: newId(), Timestamp: new Date(Date.now() - 120_000).toISOString() });
    expect((await post(retried)).status).toBe(200);
    expect(await statusOf(email.id)).toBe('SENT'); // queued, not processed here
  });

  it('refuses a Timestamp that is not a date with 400', async () => {
    const envelope = sns.sign({ ...event('Delivery', 'ses-x'), Timestamp: 'yesterday' });
    const res = await post(envelope);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });
});

describe('signing certificates', () => {
  it('1,000 distinct SigningCertURLs do not grow the cache past its bound nor cause 1,000 downloads', async () => {
    const calls: string[] = [];
    const verifier = createSnsVerifier(async (url) => {
      calls.push(url);
      return { status: 200, body: sns.certPem };
    });
    const outcomes = { ok: 0, unavailable: 0 };
    for (let i = 0; i < 1000; i++) {
      const certUrl = `https://sns.us-east-1.amazonaws.com/SimpleNotificationService-${i.toString(16).padStart(32, '0')}.pem`;
      try {
        await verifier.verify(sns.notification({ i }, { certUrl }));
        outcomes.ok++;
      } catch (err) {
        expect(err).toBeInstanceOf(SnsCertificateUnavailable);
        outcomes.unavailable++;
      }
    }
    expect(calls.length).toBeLessThanOrEqual(30);
    expect(verifier.cachedCertificates()).toBeLessThanOrEqual(50);
    expect(outcomes.ok).toBe(calls.length);
    // A cached certificate still verifies without a download.
    const lastCached = calls[calls.length - 1];
    await verifier.verify(sns.notification({ again: true }, { certUrl: lastCached }));
    expect(calls.length).toBeLessThanOrEqual(30);
  });

  it('verifies SignatureVersion 1 and 2 with node:crypto and refuses a version-2 message signed with SHA1', async () => {
    const verifier = createSnsVerifier(async () => ({ status: 200, body: sns.certPem }));
    await verifier.verify(sns.notification({ v: 1 }, { signatureVersion: '1' }));
    await verifier.verify(sns.notification({ v: 2 }, { signatureVersion: '2' }));
    const v1 = sns.notification({ v: 1 }, { signatureVersion: '1' });
    await expect(verifier.verify({ ...v1, SignatureVersion: '2' })).rejects.toThrow('Invalid SNS message signature');
  });

  it('caps the size of a fetched body', async () => {
    const server = createServer((_req, res) => res.end('x'.repeat(200_000)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      await expect(fetchHttpGet(`http://127.0.0.1:${port}/big.pem`)).rejects.toThrow(/larger than/);
    } finally {
      server.close();
    }
  });
});

describe('subscription and topics', () => {
  it('confirms a subscription by calling its SNS SubscribeURL', async () => {
    httpCalls.length = 0;
    const url = 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn&Token=token-123';
    const res = await post(sns.subscriptionConfirmation(url));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: 'Subscription confirmed' });
    expect(httpCalls).toContain(url);
  });

  it('only accepts the topics of SNS_TOPIC_ARNS when set', async () => {
    const limited = await startTestApi({ SNS_TOPIC_ARNS: `${TEST_TOPIC_ARN}, arn:aws:sns:eu-west-1:1:other` });
    try {
      const a = express();
      a.use('/n', sesNotificationRoutes(limited.deps, { httpGet: async () => ({ status: 200, body: sns.certPem }) }));
      a.use(errorHandler);
      const foreign = sns.notification(sesEventMessage('Delivery', { sesMessageId: 'x' }), {
        topicArn: 'arn:aws:sns:us-east-1:999:attacker',
      });
      const refused = await request(a).post('/n').set('Content-Type', 'text/plain').send(JSON.stringify(foreign));
      expect(refused.status).toBe(403);
      const accepted = await request(a)
        .post('/n')
        .set('Content-Type', 'text/plain')
        .send(JSON.stringify(event('Delivery', 'x')));
      expect(accepted.status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('refuses a subscription confirmation from a topic mailrail does not own, without confirming it', async () => {
    httpCalls.length = 0;
    const before = await rejected('unknown-topic');
    const url =
      'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-east-1:999999999999:attacker&Token=t';
    const res = await post(sns.subscriptionConfirmation(url, { topicArn: 'arn:aws:sns:us-east-1:999999999999:attacker' }));
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'SNS topic is not accepted here' });
    // No outbound call at all: neither the confirmation nor the certificate.
    expect(httpCalls).toEqual([]);
    expect(await rejected('unknown-topic')).toBe(before + 1);
  });

  it('refuses events of a topic mailrail does not own, SNS_TOPIC_ARNS unset, and writes nothing', async () => {
    const f = await fixture();
    const email = await newEmail(f, { to: 'victim@example.org' });
    const forged = sns.notification(
      sesEventMessage('Bounce', {
        sesMessageId: email.sesEmailId!,
        detail: { bouncedRecipients: [{ emailAddress: 'victim@example.org' }] },
      }),
      {
        topicArn: 'arn:aws:sns:us-east-1:999999999999:attacker',
      },
    );
    const res = await post(forged);
    expect(res.status).toBe(403);
    expect(await queue().getJob(forged.MessageId)).toBeUndefined();
    expect(await api.deps.db.suppression.count({ where: { teamId: f.team.teamId } })).toBe(0);
  });

  it('accepts a topic stored by ses setup a moment ago', async () => {
    const topicArn = `arn:aws:sns:eu-west-1:123456789012:mailrail-eu-west-1-ses-events-${newId(6)}`;
    const url = 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&Token=t';
    expect((await post(sns.subscriptionConfirmation(url, { topicArn }))).status).toBe(403);
    await rememberSnsTopic(api.deps.db, topicArn, 'eu-west-1');
    // The stored list is re-read at most every 5 s when an unknown topic posts.
    await new Promise((r) => setTimeout(r, 5100));
    expect((await post(sns.subscriptionConfirmation(url, { topicArn }))).body).toEqual({ data: 'Subscription confirmed' });
  });

  it('acknowledges SNS notifications that are not SES events without queuing them', async () => {
    const before = await queue().count();
    const res = await post(sns.notification({ notificationType: 'AmazonSnsSubscriptionSucceeded', message: 'ok' }));
    expect(res.body).toEqual({ data: 'Notification ignored' });
    expect(await queue().count()).toBe(before);
  });

  it('is mounted on the real app outside /api/v1, without an API key', async () => {
    const res = await request(api.app).post('/api/ses/notifications').set('Content-Type', 'text/plain').send('{"broken"');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect((await request(api.app).get('/api/ses/notifications')).status).toBe(200);
  });
});
