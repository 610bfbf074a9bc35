import { createLogger } from '@mailrail/core';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { resolveRegionRates, splitRate } from './rate-limits';
import { createSesV2Sender } from './ses-sender';

describe('splitRate', () => {
  it('splits the region rate between the lanes without exceeding it', () => {
    expect(splitRate(14, 0.5)).toEqual({ transactional: { max: 7, duration: 1000 }, marketing: { max: 7, duration: 1000 } });
    expect(splitRate(40, 0.25)).toEqual({ transactional: { max: 30, duration: 1000 }, marketing: { max: 10, duration: 1000 } });
    expect(splitRate(10, 0)).toEqual({ transactional: { max: 9, duration: 1000 }, marketing: { max: 1, duration: 1000 } });
    expect(splitRate(10, 1)).toEqual({ transactional: { max: 1, duration: 1000 }, marketing: { max: 9, duration: 1000 } });
    expect(splitRate(14.7, 0.5)).toEqual({ transactional: { max: 7, duration: 1000 }, marketing: { max: 7, duration: 1000 } });
    // One message per second: the lanes alternate, one message every two seconds each.
    expect(splitRate(1, 0.5)).toEqual({ transactional: { max: 1, duration: 2000 }, marketing: { max: 1, duration: 2000 } });
  });
});

describe('resolveRegionRates', () => {
  const log = createLogger('silent', 'test');
  it('takes SES_RATE_LIMIT, else the account quota from GetAccount, else 14', async () => {
    const { startFakeSes } = await import('@mailrail/core/testing/fake-ses');
    const fake = await startFakeSes();
    const ses = createSesV2Sender({ SES_ENDPOINT: fake.url, SES_TIMEOUT_MS: 2000, SEND_CONCURRENCY: 2 });
    try {
      const regions = ['us-east-1', 'eu-west-1'];
      expect(await resolveRegionRates({ SES_RATE_LIMIT: 33, sesRegions: regions }, ses, log)).toEqual(new Map([['us-east-1', 33], ['eu-west-1', 33]]));
      fake.maxSendRate = 200;
      expect(await resolveRegionRates({ SES_RATE_LIMIT: 0, sesRegions: regions }, ses, log)).toEqual(new Map([['us-east-1', 200], ['eu-west-1', 200]]));
      fake.maxSendRate = null; // like the local emulator: GetAccount is not implemented
      expect(await resolveRegionRates({ SES_RATE_LIMIT: 0, sesRegions: regions }, ses, log)).toEqual(new Map([['us-east-1', 14], ['eu-west-1', 14]]));
    } finally {
      ses.close();
      await fake.close();
    }
  });
});

describe('the per-region rate limit', () => {
  let env: TestWorkerEnv;
  const RATE = 40; // 20/s per lane with the default 0.5 marketing share
  beforeAll(async () => {
    env = await startTestWorkerEnv({ SES_RATE_LIMIT: String(RATE), SEND_CONCURRENCY: '20' });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('holds each lane to its share and the region to its rate, within 5%', async () => {
    // A backlog of more than the window can carry in both lanes, then the worker starts.
    await env.createEmails(Array.from({ length: 100 }, (_, i) => ({ to: [`tx${i}@example.net`] })));
    await env.createEmails(Array.from({ length: 100 }, (_, i) => ({ to: [`mk${i}@example.net`], lane: 'marketing' as const })));
    await env.start();
    await env.waitFor(async () => env.ses.messages.length >= 4.5 * RATE, 20_000);

    // The limiter lets a lane's whole allowance go at the start of each one-second window. The
    // rate is measured from the first message of the second window (the first one includes the
    // cold start of the HTTP connections) to the first message of the fifth: three windows.
    const lane = RATE / 2;
    const rateOf = (prefix: string) => {
      const times = env.ses.messages.filter((m) => m.destination.to[0].startsWith(prefix)).map((m) => m.at).sort((a, b) => a - b);
      return (3 * lane) / ((times[4 * lane] - times[lane]) / 1000);
    };
    for (const prefix of ['tx', 'mk']) {
      expect(rateOf(prefix)).toBeGreaterThanOrEqual(lane * 0.95);
      expect(rateOf(prefix)).toBeLessThanOrEqual(lane * 1.05);
    }
  });
});
