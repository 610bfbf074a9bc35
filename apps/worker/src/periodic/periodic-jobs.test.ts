import { queueNames } from '@mailrail/platform/queue/queues';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { periodicJobs, startPeriodicJobs, validatePeriodicJobs, type PeriodicJob } from './periodic-jobs';

const noop = async () => undefined;

describe('validatePeriodicJobs', () => {
  it('accepts 5- and 6-field cron expressions', () => {
    expect(() =>
      validatePeriodicJobs([
        { name: 'a', cron: '*/5 * * * *', run: noop },
        { name: 'b', cron: '*/30 * * * * *', run: noop },
      ]),
    ).not.toThrow();
  });
  it('names every invalid expression and duplicate at once', () => {
    const jobs: PeriodicJob[] = [
      { name: 'bad-minute', cron: '61 * * * *', run: noop },
      { name: 'gibberish', cron: 'every minute', run: noop },
      { name: 'too-short', cron: '* * * *', run: noop },
      { name: 'empty', cron: '', run: noop },
      { name: 'ok', cron: '0 * * * *', run: noop },
      { name: 'ok', cron: '0 * * * *', run: noop },
    ];
    expect(() => validatePeriodicJobs(jobs)).toThrow(
      /bad-minute: invalid cron "61 \* \* \* \*"[\s\S]*gibberish: invalid cron[\s\S]*too-short: invalid cron[\s\S]*empty: invalid cron[\s\S]*ok: declared twice/,
    );
  });
});

describe('startPeriodicJobs', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('refuses to start with an invalid SEND_SWEEP_CRON', async () => {
    const bad = { ...env.config, SEND_SWEEP_CRON: '61 * * * *' };
    await expect(startPeriodicJobs(env.deps, periodicJobs(bad))).rejects.toThrow(/sweep-unsent-emails: invalid cron/);
    expect(await env.deps.queues.get(queueNames.maintenance).getJobSchedulers()).toEqual([]);
  });

  it('refuses an everyMs that is not a positive integer, and a job with both schedules', async () => {
    expect(() =>
      validatePeriodicJobs([
        { name: 'zero', everyMs: 0, run: noop },
        { name: 'both', everyMs: 1000, cron: '* * * * *', run: noop },
        { name: 'fine', everyMs: 250, run: noop },
      ]),
    ).toThrow(/zero: invalid everyMs 0[\s\S]*both: give cron or everyMs, not both/);
  });

  it('registers one scheduler per entry, runs it, and drops schedulers that left the registry', async () => {
    const queue = env.deps.queues.get(queueNames.maintenance);
    await queue.upsertJobScheduler('retired-job', { pattern: '0 0 * * *' }, { name: 'retired-job' });
    let runs = 0;
    const runner = await startPeriodicJobs(env.deps, [
      { name: 'tick', cron: '* * * * * *', run: async () => void runs++ },
      { name: 'hourly', cron: '0 * * * *', run: noop },
    ]);
    try {
      const keys = (await queue.getJobSchedulers()).map((s) => s.key).sort();
      expect(keys).toEqual(['hourly', 'tick']);
      await env.waitFor(async () => runs >= 2, 5000);
    } finally {
      await runner.close();
    }
  });
});

describe('a periodic worker that stops taking jobs', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  const STUCK_AFTER_MS = 1500;
  // The watch measures its waits on this clock. Each test moves it past STUCK_AFTER_MS once the
  // scene is set, so what the watch decides follows from the worker's state, not from how long
  // anything took on this machine.
  let skewMs = 0;
  const now = () => Date.now() + skewMs;
  beforeEach(() => {
    skewMs = 0;
  });

  it('is replaced when its one job was lost by Redis and the next tick is due', async () => {
    const queue = env.deps.queues.get(queueNames.maintenance);
    let runs = 0;
    let release = () => {};
    const hung = new Promise<void>((resolve) => (release = resolve));
    const runner = await startPeriodicJobs(
      env.deps,
      [
        {
          name: 'tick',
          everyMs: 300,
          run: async () => {
            if (++runs === 1) await hung; // a handler waiting on a command that never settles
          },
        },
      ],
      { stuckAfterMs: STUCK_AFTER_MS, now },
    );
    try {
      const first = await env.waitFor(async () => (await queue.getJobs(['active']))[0], 5000);
      const replacedBefore = runner.replacements();
      // A failover to a replica that had not received the job yet: its keys are gone.
      await env.deps.redis.del(queue.toKey(first.id!), `${queue.toKey(first.id!)}:lock`);
      await env.deps.redis.lrem(queue.keys.active, 0, first.id!);
      skewMs = 10 * STUCK_AFTER_MS;
      await env.waitFor(async () => runs >= 2);
      expect(runner.replacements()).toBeGreaterThan(replacedBefore);
    } finally {
      release();
      await runner.close();
    }
  });

  it('is kept while it runs a job it still holds, however long', async () => {
    const queue = env.deps.queues.get(queueNames.maintenance);
    let runs = 0;
    let release = () => {};
    const long = new Promise<void>((resolve) => (release = resolve));
    const runner = await startPeriodicJobs(
      env.deps,
      [
        {
          name: 'slow-tick',
          everyMs: 300,
          run: async () => {
            if (++runs === 1) await long; // runs until the test lets it finish
          },
        },
      ],
      { stuckAfterMs: STUCK_AFTER_MS, now },
    );
    const looked = jest.spyOn(queue, 'getJobState');
    try {
      const held = await env.waitFor(async () => (await queue.getJobs(['active'])).find((j) => j.name === 'slow-tick'));
      // Everything but a free slot says "stuck": no progress for 10 x STUCK_AFTER_MS on the watch's
      // clock, and the next tick due meanwhile. Two looks at the held job (or a replacement): the
      // first check made with that clock has been decided.
      skewMs = 10 * STUCK_AFTER_MS;
      looked.mockClear();
      await env.waitFor(async () => runner.replacements() > 0 || looked.mock.calls.filter(([id]) => id === held.id).length >= 2);
      expect(await queue.getJobCounts('wait', 'delayed')).not.toEqual({ wait: 0, delayed: 0 });
      expect(runner.replacements()).toBe(0);
      release();
      await env.waitFor(async () => runs >= 2);
      expect(runner.replacements()).toBe(0);
    } finally {
      looked.mockRestore();
      release();
      await runner.close();
    }
  });
});

describe('two worker instances on the same prefix', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('run each periodic job once per tick between them, never once per instance', async () => {
    const runs: { name: string; by: string }[] = [];
    const jobsOf = (by: string): PeriodicJob[] => [
      { name: 'every-200ms', everyMs: 200, run: async () => void runs.push({ name: 'every-200ms', by }) },
      { name: 'every-second', cron: '* * * * * *', run: async () => void runs.push({ name: 'every-second', by }) },
    ];
    const a = await startPeriodicJobs(env.deps, jobsOf('a'));
    const b = await startPeriodicJobs(env.replica(), jobsOf('b'));
    try {
      await env.waitFor(
        async () => runs.filter((r) => r.name === 'every-second').length >= 3 && runs.filter((r) => r.name === 'every-200ms').length >= 10,
        15_000,
      );
    } finally {
      await a.close();
      await b.close();
    }
    // One scheduler per entry, shared by both instances (not one each)...
    expect((await a.queue.getJobSchedulers()).map((s) => s.key).sort()).toEqual(['every-200ms', 'every-second']);
    // Each tick of a scheduler is one job with its own id, `repeat:<name>:<the time it is due>`;
    // completed ones are kept (count 100).
    const ticks = (await a.queue.getJobs(['completed'])).map((j) => ({ name: j.name, id: j.id! }));
    for (const [name, periodMs] of [
      ['every-200ms', 200],
      ['every-second', 1000],
    ] as const) {
      const ran = runs.filter((r) => r.name === name);
      const ids = ticks.filter((t) => t.name === name).map((t) => t.id);
      // ...one run per tick, whichever instance took it...
      expect(new Set(ids).size).toBe(ids.length);
      expect(ran).toHaveLength(ids.length);
      // ...and the ticks lie on one timeline at least a period apart, so there are no more runs than
      // periods (a timer or a scheduler per instance would put two ticks in one period). Read from
      // the times the ticks were due, not from this machine's clock.
      const dueAt = ids.map((id) => Number(/^repeat:[a-z0-9-]+:(\d+)$/.exec(id)?.[1])).sort((x, y) => x - y);
      expect(dueAt.filter((t) => !Number.isFinite(t))).toEqual([]);
      expect(dueAt.slice(1).filter((t, i) => t - dueAt[i] < periodMs)).toEqual([]);
    }
  });
});

describe('the registry', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  const schedulersByQueue = async () => {
    const all: Record<string, string[]> = {};
    const names = [
      queueNames.maintenance,
      queueNames.campaigns,
      queueNames.domains,
      queueNames.webhooks,
      queueNames.sesEvents,
      queueNames.send(env.domain.region, 'transactional'),
      queueNames.send(env.domain.region, 'marketing'),
    ];
    for (const name of names) {
      const keys = (await env.deps.queues.get(name).getJobSchedulers()).map((s) => s.key).sort();
      if (keys.length) all[name] = keys;
    }
    return all;
  };

  it('is the only place job schedulers are declared: after start they are exactly its entries, on the maintenance queue', async () => {
    // A scheduler an older version declared on another queue is removed at start.
    await env.deps.queues.get(queueNames.campaigns).upsertJobScheduler('campaign-scan', { every: 1000 }, { name: 'scan' });
    await env.start();
    const registry = periodicJobs(env.config)
      .map((j) => j.name)
      .sort();
    expect(registry).toEqual(
      [
        'automation-tick',
        'campaign-scan',
        'contact-import-sweep',
        'domain-verification-sweep',
        'email-partitions',
        'event-prune',
        'fold-counter-deltas',
        'prune-ses-notifications',
        'purge-idempotency-records',
        'reputation-alerts',
        'request-log-partitions',
        'sweep-unsent-emails',
        'webhook-dispatch',
        'webhook-prune-events',
        'webhook-requeue-stalled',
      ].sort(),
    );
    expect(await schedulersByQueue()).toEqual({ [queueNames.maintenance]: registry });
  });

  it('declares every entry again after Redis lost them (every 10 s in production, 1 s in tests)', async () => {
    const maintenance = env.deps.queues.get(queueNames.maintenance);
    // Each removal finds its scheduler. The runner may declare some again before the loop ends
    // (it runs every second, and a busy machine makes the loop longer), so "none left" is not asserted.
    const removed = [];
    for (const s of await maintenance.getJobSchedulers()) removed.push(await maintenance.removeJobScheduler(s.key));
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.every(Boolean)).toBe(true);
    const registry = periodicJobs(env.config)
      .map((j) => j.name)
      .sort();
    await env.waitFor(
      async () => JSON.stringify(await schedulersByQueue()) === JSON.stringify({ [queueNames.maintenance]: registry }),
      10_000,
    );
  });

  it('declares the others when Redis lost the schedulers but kept their next jobs, which refuses some of them', async () => {
    // Only the schedulers' own keys go (`…:repeat` and `…:repeat:<name>`); the next job of each
    // (`…:repeat:<name>:<time>`) stays, so an hourly one cannot be declared again before its time.
    const schedulerKey = (key: string) => key.endsWith(':repeat') || /:repeat:[a-z-]+$/.test(key);
    expect(await deleteRedisPrefix(env.deps.redis, env.config.REDIS_PREFIX, schedulerKey)).toBeGreaterThan(0);
    // The campaign scan (after the hourly prune-ses-notifications in the registry) and the last entry.
    await env.waitFor(async () => {
      const keys = (await env.deps.queues.get(queueNames.maintenance).getJobSchedulers()).map((s) => s.key);
      return keys.includes('campaign-scan') && keys.includes('webhook-prune-events');
    }, 10_000);
  });

  it('takes the webhook timings from the config', () => {
    const byName = new Map(
      periodicJobs({ ...env.config, WEBHOOK_DISPATCH_EVERY_MS: 1234, WEBHOOK_REQUEUE_EVERY_MS: 5678, WEBHOOK_PRUNE_EVERY_MS: 91011 }).map(
        (j) => [j.name, j],
      ),
    );
    expect(byName.get('webhook-dispatch')).toMatchObject({ everyMs: 1234 });
    expect(byName.get('webhook-requeue-stalled')).toMatchObject({ everyMs: 5678 });
    expect(byName.get('webhook-prune-events')).toMatchObject({ everyMs: 91011 });
    expect(byName.get('campaign-scan')).toMatchObject({ everyMs: env.config.CAMPAIGN_SCAN_INTERVAL_MS });
  });
});

describe('prune-ses-notifications', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv({ SES_NOTIFICATION_RETENTION_DAYS: '7' });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('is registered hourly and deletes only the dedupe rows past the retention', async () => {
    const job = periodicJobs(env.config).find((j) => j.name === 'prune-ses-notifications');
    expect(job?.cron).toBe('23 * * * *');
    await env.deps.sql.execute(
      `INSERT INTO "SesNotification" ("messageId", "receivedAt")
       SELECT 'old-' || i, now() - interval '8 days' FROM generate_series(1, 12000) i
       UNION ALL SELECT 'recent', now() - interval '6 days'
       UNION ALL SELECT 'fresh', now()`,
    );
    await job!.run(env.deps);
    const rows = await env.deps.sql.query<{ messageId: string }>(`SELECT "messageId" FROM "SesNotification" ORDER BY 1`);
    expect(rows.map((r) => r.messageId)).toEqual(['fresh', 'recent']);
  });
});

describe('purge-idempotency-records', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('is registered hourly and deletes only the Idempotency-Key records past 24 h', async () => {
    const job = periodicJobs(env.config).find((j) => j.name === 'purge-idempotency-records');
    expect(job?.cron).toBe('41 * * * *');
    const record = (key: string, hoursAgo: number) => ({
      teamId: env.teamId,
      key,
      bodyHash: 'h',
      emailIds: ['e'],
      createdAt: new Date(Date.now() - hoursAgo * 3600_000),
    });
    await env.deps.db.idempotencyRecord.createMany({ data: [record('old', 25), record('recent', 23)] });
    expect(await job!.run(env.deps)).toEqual({ purged: 1 });
    expect((await env.deps.db.idempotencyRecord.findMany()).map((r) => r.key)).toEqual(['recent']);
  });
});

describe('reputation-alerts', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  it("is registered every 5 minutes and alerts on the worker clock's window, past REPUTATION_ALERT_MIN_SENT", async () => {
    const job = periodicJobs(env.config).find((j) => j.name === 'reputation-alerts');
    expect(job?.cron).toBe('*/5 * * * *');
    const date = env.deps.clock.now().toISOString().slice(0, 10);
    await env.deps.db.dailyEmailUsage.create({ data: { teamId: env.teamId, date, type: 'TRANSACTIONAL', sent: 999, hardBounced: 60 } });
    expect(await job!.run(env.deps)).toEqual({ teams: 0, alerts: 0 });
    await env.deps.db.dailyEmailUsage.updateMany({ where: { teamId: env.teamId, date }, data: { sent: 1000 } });
    expect(await job!.run(env.deps)).toEqual({ teams: 1, alerts: 1 });
    expect(await job!.run(env.deps)).toEqual({ teams: 1, alerts: 0 });
    expect(await env.deps.db.webhookEvent.count({ where: { teamId: env.teamId, type: 'reputation.threshold_crossed' } })).toBe(1);
  });
});
