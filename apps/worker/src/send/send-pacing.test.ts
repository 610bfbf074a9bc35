import { createLogger } from '@mailrail/platform/log/logger';
import { createMetrics } from '@mailrail/platform/metrics/metrics';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix, testRedisTarget } from '@mailrail/testing/redis';
import { createSendRateLimiter, type SendRateLimiter } from './rate-limits';
import { createLanePacing, sesCallNow, type LanePacingSettings } from './send-pacing';
import type { RawEmailToSend, SesSender, SesSendAnswer } from './ses-sender';

// The pacing seam on the real limiter (Redis), with a timeline clock this test holds still: a rate
// of 1 a second spaces permits 1,000 ms apart, so what is refused and what is granted does not
// depend on this machine's speed. SES is a recording stand-in: what pacing decides is whether and
// when it is called.

const REGION = 'pacing-test-1';
const email: RawEmailToSend = { region: REGION, raw: Buffer.from('x'), destination: { to: ['a@example.net'], cc: [], bcc: [] } };

let redis: Redis;
let prefix: string;
beforeAll(() => {
  redis = createRedis(testRedisTarget());
});
beforeEach(() => {
  prefix = testRedisPrefix();
});
afterEach(async () => {
  await deleteRedisPrefix(redis, prefix);
});
afterAll(() => {
  redis.disconnect();
});

function recordingSes(answer: () => Promise<SesSendAnswer> = async () => ({ sent: true, messageId: 'm' })) {
  const calls: RawEmailToSend[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const ses: SesSender = {
    async sendRawEmail(e) {
      calls.push(e);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        return await answer();
      } finally {
        inFlight--;
      }
    },
    getMaxSendRate: async () => null,
    close: () => undefined,
  };
  return { ses, calls, maxInFlight: () => maxInFlight };
}

function pacingOn(ses: SesSender, overrides: Partial<LanePacingSettings> = {}) {
  const limiter = createSendRateLimiter(redis, {
    prefix,
    ratesByRegion: new Map([[REGION, 1]]),
    marketingShare: 0.5,
    horizonMs: 2000,
    redisNow: () => 1_000_000,
  });
  const pauses: { lane: number[]; region: number[] } = { lane: [], region: [] };
  const metrics = createMetrics('worker');
  const pacing = createLanePacing({
    limiter,
    region: REGION,
    lane: 'transactional',
    ses,
    maxBookingWaitMs: 500,
    sesCallsInFlight: 2,
    emailsInFlight: 6,
    pauseLane: async (ms) => pauses.lane.push(ms),
    pauseRegion: async (ms) => pauses.region.push(ms),
    regionPauseMs: 5000,
    metrics,
    log: createLogger('silent', 'test'),
    ...overrides,
  });
  const permits = async (result: string) =>
    (await metrics.sendPermits.get()).values.find((v) => v.labels.result === result && v.labels.lane === 'transactional')?.value ?? 0;
  return { pacing, pauses, permits, limiter };
}

describe('LanePacing', () => {
  it('calls SES with the first slot, then answers no-slot without calling SES when the next slot is beyond the wait', async () => {
    const ses = recordingSes();
    const { pacing, permits } = pacingOn(ses.ses);
    expect(await pacing.call(email)).toEqual({ sent: true, messageId: 'm' });
    // The next permit lies 1,000 ms ahead, beyond the 500 ms a claimed email may sleep.
    expect(await pacing.call(email)).toEqual({ sent: false, reason: 'no-slot', retryInMs: expect.any(Number) });
    expect(ses.calls).toHaveLength(1);
    expect(await permits('granted')).toBe(1);
    expect(await permits('refused')).toBe(1);
  });

  it('asks before a claim: refused as "paced" with when to come back, once the lane is held back by the rate', async () => {
    const { pacing } = pacingOn(recordingSes().ses, { maxBookingWaitMs: 2000 });
    // A booking that needed no wait: the lane is free, the ask skips Redis for a moment.
    await pacing.call(email);
    expect(await pacing.ask()).toBeUndefined();
    // Two more bookings fill the 2 s horizon: the lane is now held back by the rate.
    const later = pacingOn(recordingSes().ses, { maxBookingWaitMs: 2000 });
    await later.limiter.acquire(REGION, 'transactional', 2);
    const refused = await later.pacing.ask();
    expect(refused).toEqual({ result: 'paced', retryInMs: expect.any(Number) });
    expect(refused!.result === 'paced' && refused!.retryInMs).toBeGreaterThan(0);
  });

  it('answers rate-unavailable, SES not called, when the limiter cannot be asked', async () => {
    const ses = recordingSes();
    const broken: SendRateLimiter = {
      horizonMs: 1000,
      intervalMs: () => 1000,
      acquire: async () => Promise.reject(new Error('Connection is closed.')),
    };
    const { pacing } = pacingOn(ses.ses, { limiter: broken });
    expect(await pacing.call(email)).toEqual({
      sent: false,
      reason: 'rate-unavailable',
      message: expect.stringContaining('Connection is closed.'),
    });
    expect(ses.calls).toHaveLength(0);
  });

  it('gives a claim back before booking when it would run out while the message sleeps for its slot', async () => {
    const ses = recordingSes();
    const { pacing, permits } = pacingOn(ses.ses);
    expect(await pacing.call({ ...email, startBy: Date.now() + 100 })).toEqual({ sent: false, reason: 'claim-running-out' });
    expect(ses.calls).toHaveLength(0);
    expect(await permits('granted')).toBe(0);
  });

  it('books again when the sender was late for the slot, and gives up after three late bookings', async () => {
    // Every booking is granted at once; the stand-in answers late each time, as a sender whose
    // request left after its leaveBy does.
    const ses = recordingSes(async () => ({ sent: false, reason: 'late-for-slot' }));
    const { pacing, permits } = pacingOn(ses.ses, { limiter: unlimited() });
    expect(await pacing.call(email)).toEqual({ sent: false, reason: 'no-slot', retryInMs: 1 });
    expect(ses.calls).toHaveLength(3);
    expect(await permits('late')).toBe(3);
    expect(await permits('granted')).toBe(3);
  });

  it('keeps the SES calls in flight at the lane bound, whatever the number of callers', async () => {
    const ses = recordingSes(async () => {
      await new Promise((r) => setTimeout(r, 20));
      return { sent: true, messageId: 'm' };
    });
    const { pacing } = pacingOn(ses.ses, { limiter: unlimited(), sesCallsInFlight: 2 });
    await Promise.all(Array.from({ length: 8 }, () => pacing.call(email)));
    expect(ses.calls).toHaveLength(8);
    expect(ses.maxInFlight()).toBe(2);
  });

  it('lets SES errors through as the SDK threw them (the send decides what they mean)', async () => {
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    const { pacing } = pacingOn(recordingSes(async () => Promise.reject(throttled)).ses, { limiter: unlimited() });
    await expect(pacing.call(email)).rejects.toBe(throttled);
  });

  it('pauses the lane for a paced email, and both lanes of the region after SES throttled', async () => {
    const { pacing, pauses } = pacingOn(recordingSes().ses);
    await pacing.report({ result: 'paced', retryInMs: 750 }, 'em_1');
    await pacing.report({ result: 'throttled', failure: { kind: 'throttled', name: 'ThrottlingException', message: '' } }, 'em_2');
    expect(pauses).toEqual({ lane: [750], region: [5000] });
  });

  it('runs at most emailsInFlight sends at once', async () => {
    const { pacing } = pacingOn(recordingSes().ses, { emailsInFlight: 3 });
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        pacing.inEmailSlot(async () => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 5));
          running--;
        }),
      ),
    );
    expect(most).toBe(3);
  });
});

describe('sesCallNow', () => {
  it('calls SES at once and answers as the lane does', async () => {
    const ses = recordingSes();
    expect(await sesCallNow(ses.ses)(email)).toEqual({ sent: true, messageId: 'm' });
  });
});

/** A limiter that grants every permit at once (what the bound under test is, is not the rate). */
function unlimited(): SendRateLimiter {
  return {
    horizonMs: 1000,
    intervalMs: () => 1,
    acquire: async () => ({ granted: true, delayMs: 0, slotAt: Date.now(), queuedMs: 0 }),
  };
}
