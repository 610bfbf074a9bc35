import { randomBytes } from 'node:crypto';
import { systemClock } from '@mailrail/platform/clock';
import type { Db } from '@mailrail/platform/db/client';
import { createLogger } from '@mailrail/platform/log/logger';
import { createRedis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix, testRedisTarget } from '@mailrail/testing/redis';
import { waitFor } from '@mailrail/testing/wait-for';
import { createApiKeyVerifier, TooManyAuthFailures } from './api-key-auth';
import { hashKeySecret } from './api-keys';

// The verifier's per-IP limit counts before the database lookup it limits: however many wrong
// keys one IP sends at once, at most AUTH_FAILURES_PER_MINUTE are looked up. Every lookup is
// counted and held until the whole burst has reached one or been answered.

const MAX = 5;
const BURST = 200;
const redis = createRedis(testRedisTarget());
const prefix = testRedisPrefix();
const log = createLogger('silent', 'test');
afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

const newClientId = () => randomBytes(5).toString('hex');
const newSecret = () => randomBytes(16).toString('hex');

/** A database with one key, whose lookups are counted and wait until `open()`. */
function heldDatabase(good: { clientId: string; secret: string }) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const held = { lookups: 0, open };
  const db = {
    apiKey: {
      async findUnique({ where }: { where: { clientId: string } }) {
        held.lookups++;
        await opened;
        if (where.clientId !== good.clientId) return null;
        return {
          id: 1,
          tokenHash: hashKeySecret(good.secret),
          permission: 'FULL',
          domainId: null,
          teamId: 7,
          revokedAt: null,
          team: { apiRateLimit: null },
        };
      },
      update: async () => undefined,
    },
  } as unknown as Db;
  return { db, held };
}

function verifierOn(db: Db, redisPrefix: string, cacheSeconds = 60) {
  return createApiKeyVerifier({
    config: {
      REDIS_PREFIX: redisPrefix,
      API_KEY_CACHE_SECONDS: cacheSeconds,
      API_KEY_NEGATIVE_CACHE_SECONDS: 60,
      AUTH_FAILURES_PER_MINUTE: MAX,
      API_RATE_LIMIT: 10,
      API_RATE_LIMIT_MAX: 100,
    },
    db,
    redis,
    log,
    clock: systemClock,
  });
}

describe('API key failures per IP, counted before the lookup', () => {
  it(`${BURST} simultaneous wrong keys from one IP look up at most AUTH_FAILURES_PER_MINUTE; the right key after them is refused`, async () => {
    const good = { clientId: newClientId(), secret: newSecret() };
    const { db, held } = heldDatabase(good);
    const verifier = verifierOn(db, `${prefix}:burst`);
    try {
      const outcomes: string[] = [];
      const settle = (key: string, i: number) =>
        verifier.verify(key, '203.0.113.9').then(
          () => (outcomes[i] = 'ok'),
          (err: unknown) => (outcomes[i] = err instanceof TooManyAuthFailures ? 'limited' : 'invalid'),
        );
      const answered = () => outcomes.filter(Boolean).length;
      const pending = Array.from({ length: BURST - 1 }, (_, i) => settle(`us_${newClientId()}_${newSecret()}`, i));
      await waitFor(() => held.lookups + answered() >= BURST - 1, { timeoutMs: 30_000, intervalMs: 10, what: 'the burst' });
      const before = held.lookups + answered();
      pending.push(settle(`us_${good.clientId}_${good.secret}`, BURST - 1));
      await waitFor(() => held.lookups + answered() > before, { timeoutMs: 30_000, intervalMs: 10, what: 'the right key' });
      held.open();
      await Promise.all(pending);

      expect(held.lookups).toBe(MAX);
      expect(outcomes.filter((o) => o === 'invalid')).toHaveLength(MAX);
      expect(outcomes[BURST - 1]).toBe('limited');
      // Another IP is not affected, and a success gives its attempt back.
      await expect(verifier.verify(`us_${good.clientId}_${good.secret}`, '198.51.100.1')).resolves.toMatchObject({ teamId: 7 });
    } finally {
      held.open();
      verifier.close();
    }
  });

  it('a key that verifies gives its attempt back: an IP with MAX - 1 failures may sign in many times and still fail once', async () => {
    const good = { clientId: newClientId(), secret: newSecret() };
    const { db, held } = heldDatabase(good);
    held.open();
    // No cache, so every right key is an attempt that is looked up and given back.
    const verifier = verifierOn(db, `${prefix}:giveback`, 0);
    try {
      const ip = '203.0.113.10';
      for (let i = 0; i < MAX - 1; i++)
        await expect(verifier.verify(`us_${newClientId()}_${newSecret()}`, ip)).rejects.toThrow('Invalid API token');
      for (let i = 0; i < 10; i++) await verifier.verify(`us_${good.clientId}_${good.secret}`, ip);
      await expect(verifier.verify(`us_${newClientId()}_${newSecret()}`, ip)).rejects.toThrow('Invalid API token');
      await expect(verifier.verify(`us_${newClientId()}_${newSecret()}`, ip)).rejects.toBeInstanceOf(TooManyAuthFailures);
    } finally {
      verifier.close();
    }
  });

  it(`${BURST} simultaneous requests with one right key on a cold cache share one lookup and all pass; a wrong secret among them is still counted`, async () => {
    const good = { clientId: newClientId(), secret: newSecret() };
    const { db, held } = heldDatabase(good);
    const verifier = verifierOn(db, `${prefix}:cold`);
    try {
      const ip = '203.0.113.11';
      const right = Array.from({ length: BURST }, () => verifier.verify(`us_${good.clientId}_${good.secret}`, ip));
      const wrong = verifier.verify(`us_${good.clientId}_${newSecret()}`, ip);
      await waitFor(() => held.lookups >= 1, { timeoutMs: 30_000, intervalMs: 10, what: 'the first lookup' });
      held.open();
      const contexts = await Promise.all(right);
      expect(contexts.every((c) => c.teamId === 7)).toBe(true);
      await expect(wrong).rejects.toThrow('Invalid API token');
      expect(held.lookups).toBe(1);
      // The wrong secret holds one of the IP's MAX attempts: MAX - 1 more wrong keys, then refused.
      for (let i = 0; i < MAX - 1; i++)
        await expect(verifier.verify(`us_${newClientId()}_${newSecret()}`, ip)).rejects.toThrow('Invalid API token');
      await expect(verifier.verify(`us_${newClientId()}_${newSecret()}`, ip)).rejects.toBeInstanceOf(TooManyAuthFailures);
    } finally {
      held.open();
      verifier.close();
    }
  });
});
