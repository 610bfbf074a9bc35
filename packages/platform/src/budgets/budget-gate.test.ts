import { testRedisPrefix, testRedisTarget, deleteRedisPrefix } from '@mailrail/testing/redis';
import { createLogger } from '../log/logger';
import { createRedis } from '../redis/client';
import { BudgetFull, createBudgetGate } from './budget-gate';
import type { HeavyBudgetConfig } from './heavy-work';

const redis = createRedis(testRedisTarget());
const prefix = testRedisPrefix();
const log = createLogger('silent', 'test');
afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

const config = (perTeam: number, global: number): HeavyBudgetConfig => ({
  EXPORT_CONCURRENCY_PER_TEAM: perTeam,
  EXPORT_CONCURRENCY: global,
  SEGMENT_CONCURRENCY_PER_TEAM: perTeam,
  SEGMENT_CONCURRENCY: global,
  CAMPAIGN_PREPARATION_CONCURRENCY_PER_TEAM: perTeam,
  CAMPAIGN_PREPARATION_CONCURRENCY: global,
  CONTACT_IMPORT_CONCURRENCY_PER_TEAM: perTeam,
  CONTACT_IMPORT_CONCURRENCY: global,
  PREVIEW_CONCURRENCY_PER_TEAM: perTeam,
  PREVIEW_CONCURRENCY: global,
});
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => (err instanceof BudgetFull ? err.scope : err),
  );

describe('createBudgetGate', () => {
  it("refuses a team's run past its own limit while another team still gets a place", async () => {
    const gate = createBudgetGate(redis, { prefix: `${prefix}:a`, config: config(2, 10), log });
    const held = [await gate.acquire('export', 1), await gate.acquire('export', 1)];
    expect(await refusal(gate.acquire('export', 1))).toBe('team');
    const other = await gate.acquire('export', 2);
    // Another operation of the same team has a budget of its own.
    const segment = await gate.acquire('segment', 1);
    await held[0].release();
    const again = await gate.acquire('export', 1);
    await Promise.all([held[1], other, segment, again].map((l) => l.release()));
  });

  it('refuses every team past the global limit, and gives back the team place it took', async () => {
    const gate = createBudgetGate(redis, { prefix: `${prefix}:b`, config: config(1, 3), log });
    const held = [await gate.acquire('segment', 1), await gate.acquire('segment', 2), await gate.acquire('segment', 3)];
    expect(await refusal(gate.acquire('segment', 4))).toBe('global');
    await held[2].release();
    // Team 4's refused try left no place taken: its one place is free.
    const four = await gate.acquire('segment', 4);
    expect(await refusal(gate.acquire('segment', 3))).toBe('global');
    await Promise.all([...held.slice(0, 2), four].map((l) => l.release()));
  });

  it('counts the places of every replica together, and 50 simultaneous tries get exactly the limit', async () => {
    const replicas = [0, 1, 2].map(() => createBudgetGate(redis, { prefix: `${prefix}:c`, config: config(3, 10), log }));
    const tries = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => replicas[i % 3].acquire('contact-import', 7)));
    const granted = tries.filter((t) => t.status === 'fulfilled');
    expect(granted).toHaveLength(3);
    expect(tries.filter((t) => t.status === 'rejected' && t.reason instanceof BudgetFull && t.reason.scope === 'team')).toHaveLength(47);
    await Promise.all(granted.map((t) => (t as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release()));
  });

  it('run() releases its place when the work throws', async () => {
    const gate = createBudgetGate(redis, { prefix: `${prefix}:d`, config: config(1, 1), log });
    await expect(gate.run('preview', 1, async () => Promise.reject(new Error('render failed')))).rejects.toThrow('render failed');
    await expect(gate.run('preview', 1, async () => 'rendered')).resolves.toBe('rendered');
  });
});
