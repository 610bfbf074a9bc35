import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '@mailrail/platform/log/logger';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix, testRedisTarget } from '@mailrail/testing/redis';
import { maxInAnyWindow, rateBetweenFirstAndLast } from '@mailrail/testing/rate-windows';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import {
  createSendRateLimiter,
  rateLimiterKey,
  recipientCount,
  redisClockOffset,
  resolveRegionRates,
  type SendPermit,
} from './rate-limits';
import { createSesV2Sender, LATE_FOR_SLOT } from './ses-sender';

describe('resolveRegionRates', () => {
  const log = createLogger('silent', 'test');
  it('takes SES_RATE_LIMIT, else the account quota from GetAccount, else 14', async () => {
    const { startFakeSes } = await import('@mailrail/testing/fake-ses');
    const fake = await startFakeSes();
    const ses = createSesV2Sender({ SES_ENDPOINT: fake.url, SES_TIMEOUT_MS: 2000, SEND_CONCURRENCY: 2 });
    try {
      const regions = ['us-east-1', 'eu-west-1'];
      expect(await resolveRegionRates({ SES_RATE_LIMIT: 33, sesRegions: regions }, ses, log)).toEqual(
        new Map([
          ['us-east-1', 33],
          ['eu-west-1', 33],
        ]),
      );
      fake.maxSendRate = 200;
      expect(await resolveRegionRates({ SES_RATE_LIMIT: 0, sesRegions: regions }, ses, log)).toEqual(
        new Map([
          ['us-east-1', 200],
          ['eu-west-1', 200],
        ]),
      );
      fake.maxSendRate = null; // like the local emulator: GetAccount is not implemented
      expect(await resolveRegionRates({ SES_RATE_LIMIT: 0, sesRegions: regions }, ses, log)).toEqual(
        new Map([
          ['us-east-1', 14],
          ['eu-west-1', 14],
        ]),
      );
    } finally {
      ses.close();
      await fake.close();
    }
  });
});

describe('recipientCount', () => {
  it('counts every envelope recipient, as SES counts its rate', () => {
    expect(recipientCount({ to: ['a@x.org'], cc: [], bcc: [] })).toBe(1);
    expect(recipientCount({ to: ['a@x.org', 'b@x.org'], cc: ['c@x.org'], bcc: ['d@x.org'] })).toBe(4);
  });
});

// The limiter itself, against the real Redis. Two limiter objects on two connections stand for two
// worker replicas. Timings are read from the limiter's answers (ms until the slot, computed on
// Redis's clock), so a slow machine only widens the elapsed time between calls, which the
// tolerances below absorb.
describe("the estimate of this process's clock against Redis's", () => {
  // sample(askedAt, answeredAt, redisNow): Redis's clock is 1000 ms behind this one.
  const at = (answeredAt: number, roundTripMs: number, skewMs = 0) =>
    [answeredAt - roundTripMs, answeredAt, answeredAt - roundTripMs / 2 - 1000 + skewMs] as const;

  it('keeps the fastest round trip, and does not hand the estimate to a slow one when the best grows old', () => {
    const clock = redisClockOffset(30_000);
    expect(clock.sample(...at(0, 1))).toBe(1000);
    // Ordinary round trips, then, a minute after the fastest, a slow one whose answer waited in a
    // busy event loop (Redis read its clock early in it). It must not be taken for the clock.
    expect(clock.sample(...at(20_000, 6, 2))).toBe(1000);
    expect(clock.sample(...at(40_000, 6, 2))).toBe(1000);
    expect(clock.sample(...at(61_000, 60, -25))).toBe(1000);
    expect(clock.sample(...at(71_000, 60, -25))).toBe(998);
  });

  it('follows a clock that stepped within two windows', () => {
    const clock = redisClockOffset(30_000);
    expect(clock.sample(...at(0, 1))).toBe(1000);
    expect(clock.sample(...at(31_000, 5, 300))).toBe(1000); // the previous window's faster sample
    expect(clock.sample(...at(62_000, 5, 300))).toBe(700);
    // After a silence longer than two windows, the first sample is taken as it is.
    expect(clock.sample(...at(200_000, 40, 10))).toBe(990);
  });
});

describe('the shared send rate limiter', () => {
  let redis: Redis;
  let other: Redis;
  let prefix: string;
  beforeAll(() => {
    redis = createRedis(testRedisTarget());
    other = createRedis(testRedisTarget());
  });
  beforeEach(() => {
    prefix = testRedisPrefix();
  });
  afterEach(async () => {
    await deleteRedisPrefix(redis, prefix);
  });
  afterAll(() => {
    redis.disconnect();
    other.disconnect();
  });
  const REGION = 'us-east-1';
  const limiters = (rate: number, marketingShare = 0.5, horizonMs = 1000) => {
    const settings = { prefix, ratesByRegion: new Map([[REGION, rate]]), marketingShare, horizonMs };
    return [createSendRateLimiter(redis, settings), createSendRateLimiter(other, settings)];
  };
  /** Asks in turn, from both replicas; returns each answer with the local time the slot falls at. */
  const ask = async (all: ReturnType<typeof limiters>, lane: 'transactional' | 'marketing', times: number, permits = 1) => {
    const out: { permit: SendPermit; at: number }[] = [];
    for (let i = 0; i < times; i++) {
      const asked = Date.now();
      const permit = await all[i % all.length].acquire(REGION, lane, permits);
      out.push({ permit, at: asked + (permit.granted ? permit.delayMs : NaN) });
    }
    return out;
  };
  const gaps = (answers: { at: number }[]) => answers.slice(1).map((a, i) => a.at - answers[i].at);

  it('keeps its state under one cluster hash tag per region, with an expiry', async () => {
    expect(rateLimiterKey('mr', 'eu-west-1')).toBe('mr:{ses-rate:eu-west-1}');
    const [a] = limiters(10);
    await a.acquire(REGION, 'transactional', 1);
    const ttl = await redis.pttl(rateLimiterKey(prefix, REGION));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(70_000);
  });

  it('spaces permits one interval apart across replicas, up to the horizon, then refuses with the time to come back', async () => {
    const all = limiters(10); // 100 ms apart, 1 s horizon
    // All twenty asked at once, alternating between the replicas: Redis answers them within a few
    // milliseconds, so the horizon cannot drain between two of them. Asked one after the other, a
    // stall of 100 ms (a busy CI machine, a cluster redirect) freed a slot between a refusal and
    // the next ask, which then was granted.
    const asked = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => all[i % 2].acquire(REGION, 'transactional', 1)));
    const granted = answers.flatMap((p) => (p.granted ? [{ at: asked + p.delayMs }] : [])).sort((a, b) => a.at - b.at);
    const refused = answers.flatMap((p) => (p.granted ? [] : [p]));
    // Slots at 0, 100, ..., 1000 ms from the first answer.
    expect(granted).toHaveLength(11);
    for (const gap of gaps(granted)) {
      expect(gap).toBeGreaterThanOrEqual(100 - 40);
      expect(gap).toBeLessThanOrEqual(100 + 40);
    }
    // The next free slot was 1100 ms away: come back when half the horizon has drained.
    expect(refused).toHaveLength(9);
    for (const r of refused) {
      expect(r.retryInMs).toBeGreaterThanOrEqual(450);
      expect(r.retryInMs).toBeLessThanOrEqual(650);
    }
  });

  it('sends the requests of one turn of the event loop in one call, decided in order as separate calls would be', async () => {
    const [a] = limiters(10, 0.25); // 100 ms apart, 1 s horizon
    const lanes = [...Array(12).fill('transactional'), 'marketing', 'transactional', 'marketing'] as const;
    const calls = jest.spyOn(redis, 'evalsha');
    let together: SendPermit[];
    try {
      together = await Promise.all(lanes.map((lane) => a.acquire(REGION, lane, 1)));
      expect(calls).toHaveBeenCalledTimes(1);
    } finally {
      calls.mockRestore();
    }
    await deleteRedisPrefix(redis, prefix);
    const apart: SendPermit[] = [];
    for (const lane of lanes) apart.push(await a.acquire(REGION, lane, 1));
    // Eleven slots fill the horizon; the twelfth is refused, which marks transactional mail as
    // waiting, so the campaign mail after it is held to its share (refused: its own timeline is
    // ahead), and so is the next transactional request (no slot within the horizon).
    const shape = (permits: SendPermit[]) => permits.map((p) => (p.granted ? `+${Math.round(p.queuedMs / 100)}` : '-'));
    expect(shape(together)).toEqual(['+0', '+1', '+2', '+3', '+4', '+5', '+6', '+7', '+8', '+9', '+10', '-', '-', '-', '-']);
    // One at a time, Redis's clock moves between the calls (more on a slow machine): only which were granted is compared.
    expect(apart.map((p) => p.granted)).toEqual(together.map((p) => p.granted));
  });

  it("places each slot on this process's clock from Redis's, so an answer that waited in a busy event loop does not move it", async () => {
    const [a] = limiters(10); // 100 ms apart
    // Looks that book nothing, on a free event loop: the clock samples (the first call also
    // connects and loads the script, a long round trip).
    for (let i = 0; i < 5; i++) await a.acquire(REGION, 'transactional', 1, { peek: true });
    const first = await a.acquire(REGION, 'transactional', 1);
    expect(first.granted && Math.abs(first.slotAt - Date.now())).toBeLessThanOrEqual(20);
    // The second slot is 100 ms after the first on Redis's timeline. Its answer is read only after
    // the event loop was held for 250 ms: counted from the answer it would look 100 ms ahead.
    const pending = a.acquire(REGION, 'transactional', 1);
    // The call has left: the limiter sends a turn's requests once that turn's ticks are done, and
    // the auto-pipelined connection writes them in the next check phase, before a second setImmediate.
    await new Promise((r) => setImmediate(() => setImmediate(r)));
    const heldUntil = Date.now() + 250;
    while (Date.now() < heldUntil); // a busy event loop
    const second = await pending;
    expect(second.granted).toBe(true);
    if (!second.granted || !first.granted) return;
    expect(second.slotAt - first.slotAt).toBeGreaterThanOrEqual(100 - 20);
    expect(second.slotAt - first.slotAt).toBeLessThanOrEqual(100 + 20);
    expect(Date.now() - second.slotAt).toBeGreaterThanOrEqual(100); // late, and the worker can tell
  });

  it('lets campaign mail take the whole rate while no transactional mail waits', async () => {
    const all = limiters(10, 0.25);
    // Transactional mail that queues behind transactional mail only does not hold campaign mail back.
    await ask(all, 'transactional', 2);
    const answers = await ask(all, 'marketing', 6);
    expect(answers.every((a) => a.permit.granted)).toBe(true);
    for (const gap of gaps(answers)) expect(gap).toBeLessThanOrEqual(100 + 40);
  });

  it('holds campaign mail to its share while transactional mail waits, and lets go soon after', async () => {
    const all = limiters(10, 0.5); // campaign mail: one permit per 200 ms while transactional mail waits
    // Transactional mail queued behind campaign mail booked ahead of it: the lane waits.
    await ask(all, 'marketing', 2); // slots 0 and 100; campaign mail's own timeline is then at 300
    await ask(all, 'transactional', 1); // 200
    const [third, fourth] = await ask(all, 'marketing', 2);
    expect(third.permit.granted).toBe(true); // 300: the head of the timeline, campaign mail's next is 500
    // Campaign mail never books ahead of the head (the slots in between would be lost): it is told
    // to come back when its own timeline reaches the head, about 100 ms.
    expect(fourth.permit.granted).toBe(false);
    expect((fourth.permit as { retryInMs: number }).retryInMs).toBeGreaterThanOrEqual(100 - 40);
    expect((fourth.permit as { retryInMs: number }).retryInMs).toBeLessThanOrEqual(100 + 10);
    // Transactional mail is never capped: it books the next slot, 400.
    const [tx] = await ask(all, 'transactional', 1);
    expect(tx.permit.granted).toBe(true);
    expect(tx.at - third.at).toBeGreaterThanOrEqual(100 - 40);
    expect(tx.at - third.at).toBeLessThanOrEqual(100 + 40);
    // Now the head (500) is campaign mail's turn again.
    const [fifth] = await ask(all, 'marketing', 1);
    expect(fifth.permit.granted).toBe(true);
    expect(fifth.at - third.at).toBeGreaterThanOrEqual(200 - 40);
    expect(fifth.at - third.at).toBeLessThanOrEqual(200 + 40);
    // Queuing behind transactional mail only is not waiting; the mark lasts max(2 horizons, 1 s)
    // from the last transactional request that waited.
    await sleep(2300);
    const free = await ask(all, 'marketing', 4);
    for (const gap of gaps(free)) expect(gap).toBeLessThanOrEqual(100 + 40);
  });

  it('with a share of 0, sends no campaign mail while transactional mail waits; with 1, does not cap it', async () => {
    const none = limiters(10, 0);
    await ask(none, 'marketing', 1);
    await ask(none, 'transactional', 1);
    const [refused] = await ask(none, 'marketing', 1);
    expect(refused.permit.granted).toBe(false);
    // Until the mark expires: 1.5 horizons after the transactional request that waited.
    expect((refused.permit as { retryInMs: number }).retryInMs).toBeGreaterThan(1000);
    expect((refused.permit as { retryInMs: number }).retryInMs).toBeLessThanOrEqual(1500);

    prefix = testRedisPrefix();
    const whole = limiters(10, 1);
    await ask(whole, 'marketing', 1);
    await ask(whole, 'transactional', 1);
    const free = await ask(whole, 'marketing', 4);
    for (const gap of gaps(free)) expect(gap).toBeLessThanOrEqual(100 + 40);
  });

  it('counts recipients: a message for n recipients takes n permits and leaves in the middle of them', async () => {
    const [a, b] = limiters(10);
    const asked = Date.now();
    const three = await a.acquire(REGION, 'transactional', 3); // permits at 0, 100, 200
    expect(three.granted && three.delayMs).toBeGreaterThanOrEqual(100 - 40);
    expect(three.granted && three.delayMs).toBeLessThanOrEqual(100);
    const next = await b.acquire(REGION, 'marketing', 1);
    const nextAt = Date.now() + (next.granted ? next.delayMs : NaN);
    expect(nextAt - asked).toBeGreaterThanOrEqual(300 - 40);
    expect(nextAt - asked).toBeLessThanOrEqual(300 + 40);
    // A booking beyond the allowed wait is refused and books nothing.
    const tooMany = await a.acquire(REGION, 'transactional', 50, { maxWaitMs: 2000 });
    expect(tooMany.granted).toBe(false);
    // Looking books nothing either.
    expect(await a.acquire(REGION, 'transactional', 1, { peek: true })).toMatchObject({ granted: true });
    const after = await b.acquire(REGION, 'transactional', 1);
    expect(after.granted && after.delayMs).toBeLessThanOrEqual(400);
  });
});

// The whole send path in one worker process: both lanes with a backlog, at 20 messages per second.
describe('the per-region rate limit in the worker', () => {
  let env: TestWorkerEnv;
  const RATE = 20;
  beforeAll(async () => {
    env = await startTestWorkerEnv({ SES_RATE_LIMIT: String(RATE), SEND_CONCURRENCY: '20', SES_MARKETING_SHARE: '0.5' });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('never exceeds the rate at SES, gives transactional mail at least its part, and counts no attempt for a wait', async () => {
    // When the worker hands each message to the SES client, after the limiter let it go; a message
    // the client gives back unsent (it would leave late for its slot, and is booked again) is not counted.
    const released: { to: string; at: number; recipients: number }[] = [];
    const ses = env.deps.ses;
    const send = ses.sendRawEmail.bind(ses);
    ses.sendRawEmail = (email) => {
      const recipients = email.destination.to.length + email.destination.cc.length + email.destination.bcc.length;
      const entry = { to: email.destination.to[0], at: Date.now(), recipients };
      released.push(entry);
      return send(email).catch((err: Error) => {
        if (err.name === LATE_FOR_SLOT) released.splice(released.indexOf(entry), 1);
        throw err;
      });
    };
    // A warm worker first (its first SES calls open sockets and load the SDK's credential chain).
    await env.start();
    const warm = await env.createEmails([{ to: ['warm1@example.net'] }, { to: ['warm2@example.net'], lane: 'marketing' }]);
    await env.waitFor(async () => env.ses.messages.length >= warm.length, 30_000);
    // SES counts recipients: a few transactional emails have three (To, Cc, Bcc).
    const tx = await env.createEmails(
      Array.from({ length: 60 }, (_, i) => ({
        to: [`tx${i}@example.net`],
        ...(i % 10 === 0 ? { cc: [`cc${i}@example.net`], bcc: [`bcc${i}@example.net`] } : {}),
      })),
    );
    const mk = await env.createEmails(Array.from({ length: 100 }, (_, i) => ({ to: [`mk${i}@example.net`], lane: 'marketing' as const })));
    const total = warm.length + tx.length + mk.length;
    expect(total).toBe(2 + 60 + 100);
    await env.waitFor(async () => env.ses.messages.length >= total, 60_000);
    await env.waitFor(async () => (await env.deps.db.email.count({ where: { latestStatus: 'SENT' } })) === total, 30_000);

    const at = (prefix: string) => env.ses.messages.filter((m) => m.destination.to[0].startsWith(prefix)).map((m) => m.at);
    const all = [...at('tx'), ...at('mk')];
    // Where the limiter acts: no one-second window above the rate by more than one message.
    expect(maxInAnyWindow(released.filter((r) => !r.to.startsWith('warm')).map((r) => r.at))).toBeLessThanOrEqual(RATE + 1);
    // Every recipient took a permit (more when a job woke up late and booked again).
    const granted = (await env.deps.metrics.sendPermits.get()).values.filter((v) => v.labels.result === 'granted');
    expect(granted.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThanOrEqual(released.reduce((sum, r) => sum + r.recipients, 0));
    expect(released.reduce((sum, r) => sum + r.recipients, 0)).toBe(total + 2 * 6);
    // SES's view. The fake SES shares this test's event loop with the worker: a stall of the loop
    // (the machine is shared) lets a request sent before it be recorded together with the next one,
    // hence one message more of slack here. Fault scenario 9 checks rate + 1 at a fake SES in
    // another process than the three workers.
    expect(maxInAnyWindow(all)).toBeLessThanOrEqual(RATE + 2);
    // The limiter's spacing makes the average exact. The lower bound allows for a loaded machine (a
    // job that wakes up late books again and its slot is lost, for one; two CI runs measured 0.72
    // of the rate while other suites ran beside this one), and still fails a limiter that loses
    // half the rate. Fault scenario 9 holds the workers to 0.95 of the rate, in processes of their own.
    expect(rateBetweenFirstAndLast(all)).toBeLessThanOrEqual(RATE * 1.05);
    expect(rateBetweenFirstAndLast(all)).toBeGreaterThanOrEqual(RATE * 0.6);
    // While the campaign lane still had a backlog (it outlasts the transactional mail), transactional
    // mail got at least (1 - share) of the rate.
    const txTimes = at('tx');
    expect(Math.max(...at('mk'))).toBeGreaterThan(Math.max(...txTimes));
    expect(rateBetweenFirstAndLast(txTimes)).toBeGreaterThanOrEqual(RATE * 0.5 * 0.9);

    // More jobs than the horizon holds were refused and went back to their queue: no attempt was
    // used (one claim each), nothing failed.
    const refused = (await env.deps.metrics.sendPermits.get()).values.filter((v) => v.labels.result === 'refused');
    expect(refused.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThan(0);
    const attempts = await env.deps.db.email.groupBy({ by: ['sendAttempts'], _count: true });
    expect(attempts).toEqual([{ sendAttempts: 1, _count: total }]);
  });
});

// With the rate far above what the process sends, the timeline is free: slots lie a few µs ahead,
// and a busy event loop must not make the worker book again and again for them.
describe('a rate far above what the worker sends', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv({ SES_RATE_LIMIT: '1000000', SEND_CONCURRENCY: '8' });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('does not hold the messages of a busy worker to slots it is not queued for', async () => {
    await env.start();
    const warm = await env.createEmails([{ to: ['warm@example.net'] }]);
    await env.waitFor(async () => env.ses.messages.length >= warm.length, 30_000);
    // The event loop is held 15 ms out of every 20: every step of a send (the wake-up, the SDK's
    // steps before the write) is late by more than the 10 ms a paced message may be.
    const busy = setInterval(() => {
      const until = Date.now() + 15;
      while (Date.now() < until) {
        /* held */
      }
    }, 5);
    try {
      const ids = await env.createEmails(Array.from({ length: 60 }, (_, i) => ({ to: [`free${i}@example.net`] })));
      await env.waitFor(
        async () => (await env.deps.db.email.count({ where: { id: { in: ids }, latestStatus: 'SENT' } })) === ids.length,
        60_000,
      );
    } finally {
      clearInterval(busy);
    }
    const permits = (await env.deps.metrics.sendPermits.get()).values;
    const count = (result: string) => permits.filter((v) => v.labels.result === result).reduce((sum, v) => sum + v.value, 0);
    expect(count('late')).toBe(0);
    expect(count('granted')).toBe(61);
    const attempts = await env.deps.db.email.groupBy({ by: ['sendAttempts'], _count: true });
    expect(attempts).toEqual([{ sendAttempts: 1, _count: 61 }]);
  });
});
