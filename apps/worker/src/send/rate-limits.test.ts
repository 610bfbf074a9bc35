import { createLogger } from '@mailrail/platform/log/logger';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix, testRedisTarget } from '@mailrail/testing/redis';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import {
  createSendRateLimiter,
  rateLimiterKey,
  recipientCount,
  redisClockOffset,
  resolveRegionRates,
  type SendPermit,
} from './rate-limits';
import { createSesV2Sender } from './ses-sender';

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

// The limiter itself, against the real Redis. Two limiter objects on two connections stand for two
// worker replicas. The timeline's clock (Redis's own in production) is the test's: it moves only
// when the test moves it, so the spacing, the waits and the mark of waiting transactional mail are
// read exactly from the limiter's answers, whatever this machine's speed.
describe('the shared send rate limiter', () => {
  let redis: Redis;
  let other: Redis;
  let prefix: string;
  let clock: number;
  beforeAll(() => {
    redis = createRedis(testRedisTarget());
    other = createRedis(testRedisTarget());
  });
  beforeEach(() => {
    prefix = testRedisPrefix();
    clock = 1_000_000;
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
    const settings = { prefix, ratesByRegion: new Map([[REGION, rate]]), marketingShare, horizonMs, redisNow: () => clock };
    return [createSendRateLimiter(redis, settings), createSendRateLimiter(other, settings)];
  };
  /** Asks in turn, from both replicas; returns each answer with the time its slot falls at on the timeline. */
  const ask = async (all: ReturnType<typeof limiters>, lane: 'transactional' | 'marketing', times: number, permits = 1) => {
    const out: { permit: SendPermit; at: number }[] = [];
    for (let i = 0; i < times; i++) {
      const permit = await all[i % all.length].acquire(REGION, lane, permits);
      out.push({ permit, at: clock + (permit.granted ? permit.queuedMs : NaN) });
    }
    return out;
  };
  const gaps = (answers: { at: number }[]) => answers.slice(1).map((a, i) => a.at - answers[i].at);
  const retryIn = (permit: SendPermit) => (permit.granted ? NaN : permit.retryInMs);

  it('keeps its state under one cluster hash tag per region, with an expiry a minute past its timeline', async () => {
    expect(rateLimiterKey('mr', 'eu-west-1')).toBe('mr:{ses-rate:eu-west-1}');
    const [a] = limiters(10);
    const before = Date.now();
    await a.acquire(REGION, 'transactional', 1);
    const ttl = await redis.pttl(rateLimiterKey(prefix, REGION));
    // The timeline ends one interval (100 ms) ahead; the key lasts 60 s past that, less the time
    // since it was set (± 2: whole milliseconds on two clocks).
    const since = Date.now() - before;
    expect(ttl).toBeLessThanOrEqual(100 + 60_000);
    expect(ttl).toBeGreaterThanOrEqual(100 + 60_000 - since - 2);
  });

  it('spaces permits one interval apart across replicas, up to the horizon, then refuses with the time to come back', async () => {
    const all = limiters(10); // 100 ms apart, 1 s horizon
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => all[i % 2].acquire(REGION, 'transactional', 1)));
    // Slots at 0, 100, ..., 1000 ms from now.
    const granted = answers.flatMap((p) => (p.granted ? [p.queuedMs] : [])).sort((x, y) => x - y);
    expect(granted).toEqual(Array.from({ length: 11 }, (_, i) => i * 100));
    // The next free slot is 1100 ms away: come back when half the horizon has drained, in 600 ms.
    expect(answers.filter((p) => !p.granted).map(retryIn)).toEqual(Array(9).fill(600));
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
    // Eleven slots fill the horizon (+slot in intervals); the rest are refused (-ms to come back):
    // the next free slot is 1100 ms away, back when half the horizon has drained.
    const shape = (permits: SendPermit[]) => permits.map((p) => (p.granted ? `+${p.queuedMs / 100}` : `-${p.retryInMs}`));
    expect(shape(together)).toEqual(['+0', '+1', '+2', '+3', '+4', '+5', '+6', '+7', '+8', '+9', '+10', '-600', '-600', '-600', '-600']);
    expect(shape(apart)).toEqual(shape(together));
  });

  it("makes one call per region for a turn's requests, each region on its own timeline", async () => {
    // us-east-1 100 ms apart, eu-west-1 250 ms apart.
    const limiter = createSendRateLimiter(redis, {
      prefix,
      ratesByRegion: new Map([
        [REGION, 10],
        ['eu-west-1', 4],
      ]),
      marketingShare: 0.5,
      horizonMs: 1000,
      redisNow: () => clock,
    });
    const calls = jest.spyOn(redis, 'evalsha');
    let permits: SendPermit[];
    try {
      permits = await Promise.all(['us-east-1', 'eu-west-1', 'us-east-1', 'eu-west-1'].map((r) => limiter.acquire(r, 'transactional', 1)));
      expect(calls).toHaveBeenCalledTimes(2);
    } finally {
      calls.mockRestore();
    }
    expect(permits.map((p) => (p.granted ? p.queuedMs : NaN))).toEqual([0, 0, 100, 250]);
  });

  it("places each slot on this process's clock from Redis's, so an answer that waited in a busy event loop does not move it", async () => {
    const [a] = limiters(10); // 100 ms apart
    // Looks that book nothing: the samples of the clocks' offset (the first call also connects
    // and loads the script, a long round trip). Each round trip is timed from here too.
    const sampledFrom = Date.now();
    const roundTrips: number[] = [];
    const timed = async <T>(call: () => Promise<T>) => {
      const asked = Date.now();
      const out = await call();
      roundTrips.push(Date.now() - asked);
      return out;
    };
    for (let i = 0; i < 5; i++) await timed(() => a.acquire(REGION, 'transactional', 1, { peek: true }));
    const first = await timed(() => a.acquire(REGION, 'transactional', 1));
    const firstAnswered = Date.now();
    expect(first.granted).toBe(true);
    if (!first.granted) return;
    // A free timeline: the slot is Redis's now, placed on this clock inside the round trip it was read in.
    expect(first.slotAt).toBeGreaterThanOrEqual(sampledFrom);
    expect(first.slotAt).toBeLessThanOrEqual(firstAnswered);
    // The second slot is 100 ms after the first on Redis's timeline. Its answer is read only after
    // the event loop was held past that slot, and longer than any earlier round trip (so it is
    // not the best sample of the offset): counted from the answer, it would look 100 ms ahead.
    const pending = a.acquire(REGION, 'transactional', 1);
    // The limiter sends a turn's requests on the next tick, and the auto-pipelined connection
    // writes them in the next check phase (a setImmediate queued then): the hold, queued after that
    // write, runs before the poll phase that would read the answer.
    await new Promise((r) => process.nextTick(r));
    let heldUntil = 0;
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        heldUntil = Math.max(first.slotAt + 100, Date.now() + Math.max(...roundTrips)) + 1;
        while (Date.now() < heldUntil); // a busy event loop
        resolve();
      }),
    );
    const second = await pending;
    expect(second.granted).toBe(true);
    if (!second.granted) return;
    expect(second.slotAt - first.slotAt).toBe(100);
    expect(second.slotAt).toBeLessThan(heldUntil); // late, and the worker can tell
  });

  it('lets campaign mail take the whole rate while no transactional mail waits', async () => {
    const all = limiters(10, 0.25);
    // Transactional mail that queues behind transactional mail only does not hold campaign mail back.
    await ask(all, 'transactional', 2);
    const answers = await ask(all, 'marketing', 6);
    expect(answers.every((a) => a.permit.granted)).toBe(true);
    expect(gaps(answers)).toEqual(Array(5).fill(100));
  });

  it('holds campaign mail to its share while transactional mail waits, and lets go once the mark runs out', async () => {
    const all = limiters(10, 0.5); // campaign mail: one permit per 200 ms while transactional mail waits
    // Transactional mail queued behind campaign mail booked ahead of it: the lane waits.
    await ask(all, 'marketing', 2); // slots 0 and 100; campaign mail's own timeline is then at 300
    await ask(all, 'transactional', 1); // 200
    const [third, fourth] = await ask(all, 'marketing', 2);
    expect(third.at - clock).toBe(300); // the head of the timeline, campaign mail's next is 500
    // Campaign mail never books ahead of the head (the slots in between would be lost): it is told
    // to come back when its own timeline reaches the head, in 100 ms.
    expect(retryIn(fourth.permit)).toBe(100);
    // Transactional mail is never capped: it books the next slot, 400.
    const [tx] = await ask(all, 'transactional', 1);
    expect(tx.at - third.at).toBe(100);
    // Now the head (500) is campaign mail's turn again.
    const [fifth] = await ask(all, 'marketing', 1);
    expect(fifth.at - third.at).toBe(200);
    // Queuing behind transactional mail only is not waiting; the mark lasts max(1.5 horizons, 1 s)
    // from the last transactional request that waited: 1 ms before its end campaign mail is still
    // held to its share, at its end it is not.
    clock += 1499;
    const [, held] = await ask(all, 'marketing', 2);
    expect(retryIn(held.permit)).toBe(100);
    clock += 1;
    expect(gaps(await ask(all, 'marketing', 4))).toEqual([100, 100, 100]);
  });

  it('with a share of 0, sends no campaign mail while transactional mail waits; with 1, does not cap it', async () => {
    const none = limiters(10, 0);
    await ask(none, 'marketing', 1);
    await ask(none, 'transactional', 1);
    const [refused] = await ask(none, 'marketing', 1);
    // Until the mark expires: 1.5 horizons after the transactional request that waited.
    expect(retryIn(refused.permit)).toBe(1500);

    prefix = testRedisPrefix();
    const whole = limiters(10, 1);
    await ask(whole, 'marketing', 1);
    await ask(whole, 'transactional', 1);
    const free = await ask(whole, 'marketing', 4);
    expect(gaps(free)).toEqual([100, 100, 100]);
  });

  it('counts recipients: a message for n recipients takes n permits and leaves in the middle of them', async () => {
    const [a, b] = limiters(10);
    const three = await a.acquire(REGION, 'transactional', 3); // permits at 0, 100, 200
    expect(three).toMatchObject({ granted: true, queuedMs: 100, delayMs: 100 });
    expect(await b.acquire(REGION, 'marketing', 1)).toMatchObject({ granted: true, queuedMs: 300 });
    // A booking beyond the allowed wait is refused and books nothing.
    const tooMany = await a.acquire(REGION, 'transactional', 50, { maxWaitMs: 2000 });
    expect(tooMany.granted).toBe(false);
    // Looking books nothing either.
    expect(await a.acquire(REGION, 'transactional', 1, { peek: true })).toMatchObject({ granted: true, queuedMs: 400 });
    expect(await b.acquire(REGION, 'transactional', 1)).toMatchObject({ granted: true, queuedMs: 400, delayMs: 400 });
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
