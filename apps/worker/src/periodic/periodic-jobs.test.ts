import { queueNames } from '@mailrail/core';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { periodicJobs, startPeriodicJobs, validatePeriodicJobs, type PeriodicJob } from './periodic-jobs';

const noop = async () => undefined;

describe('validatePeriodicJobs', () => {
  it('accepts 5- and 6-field cron expressions', () => {
    expect(() => validatePeriodicJobs([{ name: 'a', cron: '*/5 * * * *', run: noop }, { name: 'b', cron: '*/30 * * * * *', run: noop }])).not.toThrow();
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
    await env.deps.sql.query(
      `INSERT INTO "SesNotification" ("messageId", "receivedAt")
       SELECT 'old-' || i, now() - interval '8 days' FROM generate_series(1, 12000) i
       UNION ALL SELECT 'recent', now() - interval '6 days'
       UNION ALL SELECT 'fresh', now()`,
    );
    await job!.run(env.deps);
    const { rows } = await env.deps.sql.query<{ messageId: string }>(`SELECT "messageId" FROM "SesNotification" ORDER BY 1`);
    expect(rows.map((r) => r.messageId)).toEqual(['fresh', 'recent']);
  });
});
