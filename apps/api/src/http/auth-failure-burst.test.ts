import request from 'supertest';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi } from '../testing/api-harness';

// Failed API keys are counted per client IP before the database lookup they limit: however many
// wrong keys one IP sends at once, at most AUTH_FAILURES_PER_MINUTE are looked up, and a genuine
// key sent after the limit was reached is refused. Every lookup is counted and held until the whole
// burst has reached one or been answered, so the burst is concurrent whatever the machine's speed.

const MAX = 5;
const BURST = 200;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ AUTH_FAILURES_PER_MINUTE: String(MAX), TRUST_PROXY: 'loopback' });
});
afterAll(async () => {
  await api.close();
});

const randomClientId = () => Math.random().toString(36).slice(2, 12).padEnd(10, '0');
const badKey = () => `us_${randomClientId()}_${'0'.repeat(32)}`;

async function burst(send: (key: string) => PromiseLike<{ status: number }>, goodKey: string) {
  const findUnique = api.deps.db.apiKey.findUnique.bind(api.deps.db.apiKey);
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let lookups = 0;
  const spy = jest.spyOn(api.deps.db.apiKey, 'findUnique').mockImplementation(((args: Parameters<typeof findUnique>[0]) => {
    lookups++;
    return opened.then(() => findUnique(args));
  }) as unknown as typeof findUnique);
  try {
    const statuses: number[] = [];
    const settle = (key: string, i: number) => Promise.resolve(send(key)).then((res) => (statuses[i] = res.status));
    const answered = () => statuses.filter(Boolean).length;
    const pending = Array.from({ length: BURST - 1 }, (_, i) => settle(badKey(), i));
    await waitFor(() => lookups + answered() >= BURST - 1, { timeoutMs: 30_000, intervalMs: 10, what: 'the burst' });
    const before = lookups + answered();
    pending.push(settle(goodKey, BURST - 1));
    await waitFor(() => lookups + answered() > before, { timeoutMs: 30_000, intervalMs: 10, what: 'the genuine key' });
    open();
    await Promise.all(pending);
    return { statuses, lookups };
  } finally {
    open();
    spy.mockRestore();
  }
}

describe('concurrent failed API keys from one IP', () => {
  it(`${BURST} simultaneous wrong keys (GET /api/v1/emails) look up at most AUTH_FAILURES_PER_MINUTE; a genuine key after them is refused`, async () => {
    const fresh = await api.newKey(api.team.teamId);
    const ip = '203.0.113.21';
    const { statuses, lookups } = await burst(
      (key) => request(api.app).get('/api/v1/emails').set('X-Forwarded-For', ip).set('Authorization', `Bearer ${key}`),
      fresh,
    );
    expect(lookups).toBe(MAX);
    expect(statuses.filter((s) => s === 403)).toHaveLength(MAX);
    expect(statuses.filter((s) => s === 429)).toHaveLength(BURST - MAX);
    expect(statuses[BURST - 1]).toBe(429);
    // Another address is not affected.
    expect(
      (await request(api.app).get('/api/v1/emails').set('X-Forwarded-For', '198.51.100.21').set('Authorization', `Bearer ${fresh}`)).status,
    ).toBe(200);
  });

  it(`the accept lane (POST /api/v1/emails): ${BURST} simultaneous wrong keys look up at most AUTH_FAILURES_PER_MINUTE`, async () => {
    const fresh = await api.newKey(api.team.teamId);
    const ip = '203.0.113.22';
    const { statuses, lookups } = await burst(
      (key) =>
        request(api.app)
          .post('/api/v1/emails')
          .set('X-Forwarded-For', ip)
          .set('Authorization', `Bearer ${key}`)
          .send({ to: 'ann@dest.org', from: 'hello@example.com', subject: 'S', text: 'T' }),
      fresh,
    );
    expect(lookups).toBe(MAX);
    expect(statuses.filter((s) => s === 403)).toHaveLength(MAX);
    expect(statuses[BURST - 1]).toBe(429);
  });
});
