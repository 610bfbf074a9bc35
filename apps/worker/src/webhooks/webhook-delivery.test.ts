import { Webhooks } from 'usesend-js';
import { encryptSecret } from '@mailrail/platform/crypto/secrets';
import { newId } from '@mailrail/platform/ids';
import { newWebhookSecret } from '@mailrail/domain/webhooks/signing';
import { recordWebhookEvent, recordWebhookEvents } from '@mailrail/domain/webhooks/outbox';
import { webhookEventTypes, type WebhookEventType } from '@mailrail/domain/webhooks/events';
import { createQueueFactory, queueNames } from '@mailrail/platform/queue/queues';
import { createRedis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { deliverWebhook } from './deliver-webhook';
import { pruneWebhookEvents } from './prune-events';
import { requeueStalledDeliveries } from './requeue-stalled';
import { startReceiver, type Receiver } from '@mailrail/testing/webhook-receiver';
import { sleep, startWorkerKit, waitFor, type WorkerKit } from '../testing/webhook-test-kit';

// Real PostgreSQL, Redis and BullMQ; the receiver is a real HTTP server on 127.0.0.1, so the
// kit allows private addresses (WEBHOOK_ALLOW_PRIVATE=true) except where a test says otherwise.

let kit: WorkerKit;
let receiver: Receiver;
beforeAll(async () => {
  kit = await startWorkerKit();
});
afterAll(async () => {
  await kit.close();
});
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  await kit.stopWorkers();
  await receiver.close();
});

const verifiesWith = (secret: string, call: { body: string; headers: Record<string, unknown> }) =>
  new Webhooks(secret).verify(call.body, { headers: call.headers as Record<string, string> });

const deliveriesOf = (webhookId: string) => kit.db.webhookDelivery.findMany({ where: { webhookId }, orderBy: { createdAt: 'asc' } });

describe('delivery', () => {
  it('delivers every event type once, signed so that usesend-js constructEvent accepts it', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    const eventIds = await recordWebhookEvents(
      kit.db,
      webhookEventTypes.map((type) => ({ teamId, type, data: { sample: type } })),
    );
    const startedAt = Date.now();
    await kit.startWorkers();
    await waitFor(() => receiver.calls.length >= webhookEventTypes.length, 'all event types');
    // The receiver sees a call before the worker records its answer: wait for the rows too.
    await waitFor(
      async () => (await kit.db.webhookDelivery.count({ where: { webhookId: hook.id, status: 'DELIVERED' } })) === webhookEventTypes.length,
      'delivered rows',
    );
    await sleep(200);
    const checkedAt = Date.now();
    expect(receiver.calls).toHaveLength(webhookEventTypes.length);
    expect(receiver.calls.map((c) => c.json.type).sort()).toEqual([...webhookEventTypes].sort());

    const deliveries = await deliveriesOf(hook.id);
    for (const call of receiver.calls) {
      // The public SDK's own check: header names, v1= HMAC of "<timestamp>.<body>", 5-minute tolerance.
      const event = new Webhooks(hook.secret).constructEvent(call.body, {
        headers: call.headers as Record<string, string>,
      }) as unknown as Record<string, unknown>;
      expect(event).toEqual({
        id: expect.any(String),
        type: call.json.type,
        version: '2026-01-18',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        teamId,
        data: { sample: call.json.type },
        attempt: 1,
      });
      expect(eventIds).toContain(event.id);
      expect(call.headers['content-type']).toBe('application/json');
      expect(call.headers['user-agent']).toBe('mailrail-webhook/1.0');
      expect(call.headers['x-usesend-event']).toBe(call.json.type);
      expect(call.headers['x-usesend-retry']).toBe('false');
      // Stamped when the attempt was made: after the workers started, before the test looked.
      expect(Number(call.headers['x-usesend-timestamp'])).toBeGreaterThanOrEqual(startedAt);
      expect(Number(call.headers['x-usesend-timestamp'])).toBeLessThanOrEqual(checkedAt);
      const delivery = deliveries.find((d) => d.id === call.headers['x-usesend-call']);
      expect(delivery).toMatchObject({
        eventId: event.id,
        status: 'DELIVERED',
        attempt: 1,
        responseStatus: 200,
        responseText: 'ok',
        lastError: null,
      });
      expect(delivery!.durationMs).toEqual(expect.any(Number));
      expect(verifiesWith(newWebhookSecret(), call)).toBe(false);
    }
    expect(deliveries).toHaveLength(webhookEventTypes.length);
    const dispatched = await kit.db.webhookEvent.count({ where: { id: { in: eventIds }, dispatchedAt: { not: null } } });
    expect(dispatched).toBe(eventIds.length);
  });

  it('two workers dispatching at once deliver each event exactly once', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    const ids = await recordWebhookEvents(
      kit.db,
      Array.from({ length: 300 }, (_, i) => ({ teamId, type: 'email.delivered' as const, data: { n: i } })),
    );
    const a = await kit.startWorkers({ dispatchBatchSize: 20, dispatchEveryMs: 10 });
    const b = await kit.startWorkers({ dispatchBatchSize: 20, dispatchEveryMs: 10 });
    // Two extra passes racing the timers on top.
    await Promise.all([a.dispatchNow(), b.dispatchNow()]);
    await waitFor(() => receiver.calls.length >= ids.length, 'all events', 40_000);
    await sleep(500);
    expect(receiver.calls).toHaveLength(ids.length);
    expect(new Set(receiver.calls.map((c) => c.json.id)).size).toBe(ids.length);
    expect(await kit.db.webhookDelivery.count({ where: { webhookId: hook.id } })).toBe(ids.length);
  });

  it('retries an endpoint answering 500 with growing attempt numbers and X-UseSend-Retry, then succeeds', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    receiver.respond = (_c, n) => (n < 2 ? 500 : 200);
    await recordWebhookEvent(kit.db, { teamId, type: 'email.bounced', data: { emailId: 'e1' } });
    await kit.startWorkers({ retrySchedule: '100ms,200ms,300ms' });
    await waitFor(() => receiver.calls.length >= 3, 'three attempts');
    await waitFor(async () => (await deliveriesOf(hook.id))[0]?.status === 'DELIVERED', 'delivered row');

    expect(receiver.calls.map((c) => c.json.attempt)).toEqual([1, 2, 3]);
    expect(receiver.calls.map((c) => c.headers['x-usesend-retry'])).toEqual(['false', 'true', 'true']);
    expect(new Set(receiver.calls.map((c) => c.headers['x-usesend-call'])).size).toBe(1);
    expect(new Set(receiver.calls.map((c) => c.json.id)).size).toBe(1);
    for (const call of receiver.calls) expect(verifiesWith(hook.secret, call)).toBe(true);
    // The wait between attempts is the schedule's: the next test reads it from the rows.

    const [row] = await deliveriesOf(hook.id);
    expect(row).toMatchObject({ status: 'DELIVERED', attempt: 3, responseStatus: 200, lastError: null, nextAttemptAt: null });
    const webhook = await kit.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(webhook.consecutiveFailures).toBe(0);
    expect(webhook.lastSuccessAt).not.toBeNull();
    expect(webhook.lastFailureAt).not.toBeNull();
  });

  it('schedules each retry the wait of its attempt after that attempt failed, as the schedule says', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    receiver.respond = (_c, n) => (n < 2 ? 500 : 200);
    // Written as already dispatched: no worker runs here, each attempt is made by the test.
    const eventId = newId();
    await kit.db.webhookEvent.create({ data: { id: eventId, teamId, type: 'email.bounced', data: {}, dispatchedAt: new Date() } });
    const deliveryId = newId();
    await kit.db.webhookDelivery.create({ data: { id: deliveryId, webhookId: hook.id, eventId } });
    const settings = {
      retryDelaysMs: [100, 200, 300],
      timeoutMs: 1000,
      autoDisableAfter: 30,
      allowPrivate: true,
      secret: kit.config.SECRET,
    };
    for (const delayMs of [100, 200]) {
      // The processor hands this delay to BullMQ (register.ts, backoffStrategy), which waits it.
      expect(await deliverWebhook(kit.db, settings, deliveryId)).toEqual({ result: 'retry', delayMs, error: 'endpoint answered HTTP 500' });
      const row = await kit.db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
      const { lastFailureAt } = await kit.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
      expect(row.nextAttemptAt!.getTime() - lastFailureAt!.getTime()).toBe(delayMs);
    }
    expect(await deliverWebhook(kit.db, settings, deliveryId)).toEqual({ result: 'delivered' });
    expect(receiver.calls.map((c) => c.json.attempt)).toEqual([1, 2, 3]);
  });

  it('gives up after the last attempt of the schedule and records the failure', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    receiver.respond = () => 503;
    await recordWebhookEvent(kit.db, { teamId, type: 'email.sent', data: {} });
    await kit.startWorkers({ retrySchedule: '50ms,50ms' });
    await waitFor(async () => (await deliveriesOf(hook.id))[0]?.status === 'FAILED', 'failed row');
    await sleep(300);
    expect(receiver.calls).toHaveLength(3);
    const [row] = await deliveriesOf(hook.id);
    expect(row).toMatchObject({
      attempt: 3,
      responseStatus: 503,
      responseText: 'nope',
      lastError: 'endpoint answered HTTP 503',
      nextAttemptAt: null,
    });
    expect((await kit.db.webhook.findUniqueOrThrow({ where: { id: hook.id } })).consecutiveFailures).toBe(3);
  });

  it('records a timeout when the endpoint does not answer in time', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    receiver.respond = () => 'hang';
    await recordWebhookEvent(kit.db, { teamId, type: 'email.sent', data: {} });
    await kit.startWorkers({ retrySchedule: '10h', timeoutMs: 300 });
    await waitFor(
      async () =>
        (await deliveriesOf(hook.id))[0]?.status === 'PENDING' &&
        (await deliveriesOf(hook.id))[0]?.attempt === 1 &&
        !!(await deliveriesOf(hook.id))[0]?.lastError,
      'first attempt recorded',
    );
    const [row] = await deliveriesOf(hook.id);
    expect(row.lastError).toBe('timed out after 300 ms');
    expect(row.responseStatus).toBeNull();
    // The next attempt is the schedule's 10 h after the one that failed.
    const { lastFailureAt } = await kit.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(row.nextAttemptAt!.getTime() - lastFailureAt!.getTime()).toBe(10 * 3600_000);
  });
});

describe('which webhooks receive an event', () => {
  it('sends nothing to PAUSED or AUTO_DISABLED endpoints, and discards deliveries of an endpoint paused meanwhile', async () => {
    const teamId = await kit.newTeam();
    const paused = await kit.addWebhook(teamId, receiver.url, { status: 'PAUSED' });
    const disabled = await kit.addWebhook(teamId, receiver.url, { status: 'AUTO_DISABLED' });
    const active = await kit.addWebhook(teamId, receiver.url);
    await recordWebhookEvent(kit.db, { teamId, type: 'contact.created', data: {} });
    await kit.startWorkers();
    await waitFor(() => receiver.calls.length >= 1, 'active endpoint');
    await sleep(300);
    expect(receiver.calls).toHaveLength(1);
    expect(receiver.calls[0].headers['x-usesend-call']).toBe((await deliveriesOf(active.id))[0].id);
    expect(await kit.db.webhookDelivery.count({ where: { webhookId: { in: [paused.id, disabled.id] } } })).toBe(0);

    // A delivery created while active, attempted after the endpoint was paused.
    // (Written as already dispatched in one statement, so the running dispatcher cannot take it first.)
    const eventId = newId();
    await kit.db.webhookEvent.create({ data: { id: eventId, teamId, type: 'contact.updated', data: {}, dispatchedAt: new Date() } });
    const deliveryId = newId();
    await kit.db.webhookDelivery.create({ data: { id: deliveryId, webhookId: active.id, eventId } });
    await kit.db.webhook.update({ where: { id: active.id }, data: { status: 'PAUSED' } });
    const outcome = await deliverWebhook(
      kit.db,
      { retryDelaysMs: [], timeoutMs: 1000, autoDisableAfter: 30, allowPrivate: true, secret: kit.config.SECRET },
      deliveryId,
    );
    expect(outcome.result).toBe('discarded');
    expect(await kit.db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({
      status: 'DISCARDED',
      lastError: 'webhook is PAUSED',
    });
    expect(receiver.calls).toHaveLength(1);
  });

  it('auto-disables an endpoint after 30 consecutive failures and sends it nothing more', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    receiver.respond = () => 500;
    // 6 events x 6 attempts = 36 possible calls; only 30 may happen (one at a time, so exact).
    await recordWebhookEvents(
      kit.db,
      Array.from({ length: 6 }, () => ({ teamId, type: 'email.failed' as const, data: {} })),
    );
    await kit.startWorkers({ retrySchedule: '1ms,1ms,1ms,1ms,1ms', concurrency: 1 });
    await waitFor(
      async () => (await kit.db.webhook.findUniqueOrThrow({ where: { id: hook.id } })).status === 'AUTO_DISABLED',
      'auto-disable',
      30_000,
    );
    await waitFor(
      async () => (await kit.db.webhookDelivery.count({ where: { webhookId: hook.id, status: { in: ['PENDING', 'IN_PROGRESS'] } } })) === 0,
      'settled',
    );
    await recordWebhookEvent(kit.db, { teamId, type: 'email.failed', data: {} });
    await sleep(500);
    expect(receiver.calls).toHaveLength(30);
    const webhook = await kit.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(webhook.consecutiveFailures).toBe(30);
    expect(await kit.db.webhookDelivery.count({ where: { webhookId: hook.id } })).toBe(6);
    const rows = await deliveriesOf(hook.id);
    expect(rows.filter((r) => r.lastError?.includes('disabled after 30 consecutive failures'))).toHaveLength(1);
  });

  it('respects event and domain filters; events without a domain pass a domain filter', async () => {
    const teamId = await kit.newTeam();
    const d1 = await kit.addDomain(teamId, `a${newId(6)}.example.com`);
    const d2 = await kit.addDomain(teamId, `b${newId(6)}.example.com`);
    const onlyDelivered = await kit.addWebhook(teamId, `${receiver.url}?w=delivered`, { events: ['email.delivered'] });
    const onlyD1 = await kit.addWebhook(teamId, `${receiver.url}?w=d1`, { domainIds: [d1] });
    const otherTeam = await kit.newTeam();
    await kit.addWebhook(otherTeam, `${receiver.url}?w=other`);
    const sent: [WebhookEventType, number | null][] = [
      ['email.delivered', d1],
      ['email.delivered', d2],
      ['email.bounced', d1],
      ['email.bounced', d2],
      ['contact.created', null],
    ];
    const ids = await recordWebhookEvents(
      kit.db,
      sent.map(([type, domainId]) => ({ teamId, type, domainId, data: {} })),
    );
    await kit.startWorkers();
    await waitFor(() => receiver.calls.length >= 5, 'filtered deliveries');
    await sleep(400);
    const byHook = async (webhookId: string) => (await deliveriesOf(webhookId)).map((d) => ids.indexOf(d.eventId)).sort();
    expect(await byHook(onlyDelivered.id)).toEqual([0, 1]);
    expect(await byHook(onlyD1.id)).toEqual([0, 2, 4]);
    expect(receiver.calls).toHaveLength(5);
    expect(receiver.calls.every((c) => c.json.teamId === teamId)).toBe(true);
  });

  it('sends webhook.test to the named webhook only, whatever its filters', async () => {
    const teamId = await kit.newTeam();
    const target = await kit.addWebhook(teamId, receiver.url, { events: ['email.sent'] });
    const bystander = await kit.addWebhook(teamId, receiver.url);
    await recordWebhookEvent(kit.db, { teamId, type: 'webhook.test', data: { webhookId: target.id } });
    await kit.startWorkers();
    await waitFor(() => receiver.calls.length >= 1, 'test event');
    await sleep(300);
    expect(receiver.calls).toHaveLength(1);
    expect(verifiesWith(target.secret, receiver.calls[0])).toBe(true);
    expect(await kit.db.webhookDelivery.count({ where: { webhookId: bystander.id } })).toBe(0);
  });

  it('signs with the current secret: after rotation the old secret no longer verifies', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    await kit.startWorkers();
    await recordWebhookEvent(kit.db, { teamId, type: 'domain.created', data: {} });
    await waitFor(() => receiver.calls.length >= 1, 'first event');
    const rotated = newWebhookSecret();
    await kit.db.webhook.update({ where: { id: hook.id }, data: { secretEnc: encryptSecret(kit.config.SECRET, rotated) } });
    await recordWebhookEvent(kit.db, { teamId, type: 'domain.verified', data: {} });
    await waitFor(() => receiver.calls.length >= 2, 'second event');
    expect(verifiesWith(hook.secret, receiver.calls[0])).toBe(true);
    expect(verifiesWith(hook.secret, receiver.calls[1])).toBe(false);
    expect(verifiesWith(rotated, receiver.calls[1])).toBe(true);
  });
});

describe('a secret that cannot be decrypted', () => {
  it('fails the delivery with a clear error instead of calling unsigned', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    const other = encryptSecret('another-server-secret-of-at-least-32-chars', newWebhookSecret());
    await kit.db.webhook.update({ where: { id: hook.id }, data: { secretEnc: other } });
    const eventId = await recordWebhookEvent(kit.db, { teamId, type: 'email.sent', data: {} });
    const deliveryId = newId();
    await kit.db.webhookDelivery.create({ data: { id: deliveryId, webhookId: hook.id, eventId } });
    const outcome = await deliverWebhook(
      kit.db,
      { retryDelaysMs: [1000], timeoutMs: 1000, autoDisableAfter: 30, allowPrivate: true, secret: kit.config.SECRET },
      deliveryId,
    );
    expect(outcome.result).toBe('failed');
    expect((await kit.db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).lastError).toMatch(/cannot be decrypted/);
    expect(receiver.calls).toHaveLength(0);
  });
});

describe('server-side request forgery at delivery time', () => {
  it('refuses loopback literals, names resolving to private addresses, and re-bound names', async () => {
    const teamId = await kit.newTeam();
    const literal = await kit.addWebhook(teamId, receiver.url);
    const localhost = await kit.addWebhook(teamId, receiver.url.replace('127.0.0.1', 'localhost'));
    const rebound = await kit.addWebhook(teamId, receiver.url.replace('127.0.0.1', 'hooks.example.com'));
    await recordWebhookEvent(kit.db, { teamId, type: 'email.opened', data: {} });
    // hooks.example.com "resolves" to 10.0.0.7 here, as a name re-bound after it was saved would.
    await kit.startWorkers(
      { retrySchedule: '10h', resolveHost: async (host) => (host === 'hooks.example.com' ? ['10.0.0.7'] : ['127.0.0.1']) },
      { WEBHOOK_ALLOW_PRIVATE: false },
    );
    const settled = async () =>
      (await kit.db.webhookDelivery.count({
        where: { webhookId: { in: [literal.id, localhost.id, rebound.id] }, lastError: { not: null } },
      })) === 3;
    await waitFor(settled, 'three refused attempts');
    expect(receiver.calls).toHaveLength(0);
    expect((await deliveriesOf(literal.id))[0].lastError).toMatch(/127\.0\.0\.1 is not a public address/);
    expect((await deliveriesOf(localhost.id))[0].lastError).toMatch(/localhost resolves to 127\.0\.0\.1/);
    expect((await deliveriesOf(rebound.id))[0].lastError).toMatch(/hooks\.example\.com resolves to 10\.0\.0\.7/);
  });
});

describe('cloud metadata with WEBHOOK_ALLOW_PRIVATE', () => {
  it('still refuses metadata and link-local targets, literal or resolved, while loopback is allowed', async () => {
    const teamId = await kit.newTeam();
    const literal = await kit.addWebhook(teamId, 'http://169.254.169.254/latest/meta-data/');
    const mapped = await kit.addWebhook(teamId, 'http://[::ffff:169.254.169.254]/latest/meta-data/');
    const resolved = await kit.addWebhook(teamId, receiver.url.replace('127.0.0.1', 'metadata.example.com'));
    await recordWebhookEvent(kit.db, { teamId, type: 'email.opened', data: {} });
    await kit.startWorkers(
      { retrySchedule: '10h', resolveHost: async (host) => (host === 'metadata.example.com' ? ['100.100.100.200'] : ['127.0.0.1']) },
      { WEBHOOK_ALLOW_PRIVATE: true },
    );
    const ids = [literal.id, mapped.id, resolved.id];
    await waitFor(
      async () => (await kit.db.webhookDelivery.count({ where: { webhookId: { in: ids }, lastError: { not: null } } })) === 3,
      'three refused attempts',
    );
    expect(receiver.calls).toHaveLength(0);
    expect((await deliveriesOf(literal.id))[0].lastError).toMatch(/169\.254\.169\.254 is not a public address \(linkLocal\)/);
    expect((await deliveriesOf(mapped.id))[0].lastError).toMatch(/reaches 169\.254\.169\.254/);
    expect((await deliveriesOf(resolved.id))[0].lastError).toMatch(
      /metadata\.example\.com resolves to 100\.100\.100\.200: .*cloud metadata/,
    );
  });
});

describe('sweeper', () => {
  it('re-enqueues a due delivery whose job was lost, and leaves live jobs alone', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    const eventId = await recordWebhookEvent(kit.db, { teamId, type: 'email.clicked', data: {} });
    await kit.db.webhookEvent.update({ where: { id: eventId }, data: { dispatchedAt: new Date() } });
    const deliveryId = newId();
    await kit.db.webhookDelivery.create({
      data: { id: deliveryId, webhookId: hook.id, eventId, nextAttemptAt: new Date(Date.now() - 120_000) },
    });

    const prefix = testRedisPrefix();
    const redis = createRedis(kit.config.redis);
    const queues = createQueueFactory(redis, { ...kit.config, REDIS_PREFIX: prefix });
    try {
      const queue = queues.get(queueNames.webhooks);
      expect(await requeueStalledDeliveries(kit.sql, queue, 3, new Date(), kit.config)).toBe(1);
      expect(await queue.getJob(deliveryId)).toBeDefined();
      // The job is now waiting: a second sweep adds nothing new.
      expect(await requeueStalledDeliveries(kit.sql, queue, 3, new Date(), kit.config)).toBe(0);
      expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
      // A half-written job hash in no list (Redis keys lost one by one) would block the id: replaced.
      await queue.remove(deliveryId);
      await redis.hset(queue.toKey(deliveryId), 'processedOn', Date.now());
      expect(await queue.getJobState(deliveryId)).toBe('unknown');
      expect(await requeueStalledDeliveries(kit.sql, queue, 3, new Date(), kit.config)).toBe(1);
      expect(await queue.getJobState(deliveryId)).toBe('waiting');
    } finally {
      await queues.closeAll();
      await deleteRedisPrefix(redis, prefix);
      redis.disconnect();
    }
  });
});

describe('retention', () => {
  it('prunes dispatched events past the retention with their deliveries, never undispatched ones', async () => {
    const teamId = await kit.newTeam();
    const hook = await kit.addWebhook(teamId, receiver.url);
    const old = new Date(Date.now() - 40 * 86_400_000);
    const [oldDone, oldPending, recent] = await recordWebhookEvents(kit.db, [
      { teamId, type: 'email.sent', data: {} },
      { teamId, type: 'email.sent', data: {} },
      { teamId, type: 'email.sent', data: {} },
    ]);
    await kit.db.webhookEvent.update({ where: { id: oldDone }, data: { dispatchedAt: old, createdAt: old } });
    await kit.db.webhookEvent.update({ where: { id: oldPending }, data: { createdAt: old } });
    await kit.db.webhookEvent.update({ where: { id: recent }, data: { dispatchedAt: new Date() } });
    await kit.db.webhookDelivery.create({ data: { id: newId(), webhookId: hook.id, eventId: oldDone, status: 'DELIVERED' } });
    expect(await pruneWebhookEvents(kit.sql, 30, new Date(), 1)).toBe(1);
    const left = (await kit.db.webhookEvent.findMany({ where: { teamId }, select: { id: true } })).map((e) => e.id).sort();
    expect(left).toEqual([oldPending, recent].sort());
    expect(await kit.db.webhookDelivery.count({ where: { webhookId: hook.id } })).toBe(0);
  });
});
