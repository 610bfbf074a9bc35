import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertAndEnqueueEmails, type EmailDraft } from '@mailrail/domain/emails/create-emails';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { EMAIL_ID_HEADER } from '@mailrail/domain/emails/headers';
import { queueNames } from '@mailrail/platform/queue/queues';
import { type Config } from '@mailrail/platform/config/schema';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { emailIdOf, startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { type SesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { recordSendEventAcceptance } from '@mailrail/domain/sql/ses-acceptance';
import { deleteRedisPrefix, redisEnvOf, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { completedSince } from '@mailrail/testing/queue-state';
import { waitFor as waitUntil } from '@mailrail/testing/wait-for';
import { closeWorkerDeps, createWorkerDeps, type WorkerDeps } from '../deps';
import { startWorker, type RunningWorker } from '../worker';

export interface TestWorkerEnv {
  config: Config;
  deps: WorkerDeps;
  ses: FakeSes;
  teamId: number;
  domain: { id: number; name: string; region: string };
  /** Stores emails (and enqueues their jobs) the way the API does. */
  createEmails(drafts: Partial<EmailDraft>[]): Promise<string[]>;
  /** Starts the worker in this process; stopped by close(). */
  start(): Promise<RunningWorker>;
  /** Another set of dependencies on the same database, Redis prefix and fake SES (a second replica). */
  replica(env?: Record<string, string>): WorkerDeps;
  email(id: string): Promise<NonNullable<Awaited<ReturnType<WorkerDeps['db']['email']['findUnique']>>>>;
  events(id: string): Promise<{ status: string; data: unknown }[]>;
  waitFor<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs?: number): Promise<T>;
  /**
   * From now on (until ses.reset()) every message the fake SES accepts gets SES's `Send` event,
   * recorded a moment later as the API records one on arrival: what ends an email's
   * in-doubt wait early (docs/worker.md). Without it an email in doubt is sent again after the wait.
   */
  publishSendEvents(): void;
  /** Waits until a run of the unsent-email sweeper that started at or after `since` (epoch ms) has finished. */
  sweptSince(since: number): Promise<void>;
  close(): Promise<void>;
}

// Fast retries and a sweeper every second: tests must not wait for production timings.
const TEST_ENV: Record<string, string> = {
  SES_RATE_LIMIT: '1000',
  SES_TIMEOUT_MS: '1000',
  SEND_LEASE_SECONDS: '5',
  SEND_RETRY_BASE_MS: '200',
  SEND_RETRY_MAX_MS: '1000',
  SES_THROTTLE_PAUSE_MS: '200',
  SEND_SWEEP_CRON: '* * * * * *',
  SEND_CONCURRENCY: '10',
  // Campaign mail whose worker died mid-call waits this long for a Send event (tests publish none).
  SES_IN_DOUBT_WAIT_SECONDS: '2',
};

/** A worker on the test file's own database and Redis prefix, talking to a fake SES over HTTP. */
/**
 * One environment for a whole test file: started before its first test, closed after its last,
 * the fake SES's record cleared before each test. The handle's fields are filled in by beforeAll.
 */
export function useTestWorkerEnv(env: Record<string, string> = {}): TestWorkerEnv {
  const handle = {} as TestWorkerEnv;
  let started: TestWorkerEnv | undefined;
  beforeAll(async () => {
    started = await startTestWorkerEnv(env);
    Object.assign(handle, started);
  });
  afterAll(async () => {
    await started?.close();
  });
  beforeEach(() => handle.ses.reset());
  return handle;
}

export async function startTestWorkerEnv(env: Record<string, string> = {}): Promise<TestWorkerEnv> {
  const ses = await startFakeSes();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const configFor = (extra: Record<string, string>) =>
    testConfig(databaseUrl, prefix, { ...TEST_ENV, SES_ENDPOINT: ses.url, ...env, ...extra });
  const config = configFor({});
  const deps = createWorkerDeps(config);
  const team = await createTeam(deps.db, 'Worker team');
  const domain = await insertDomain(deps.db, config.SECRET, {
    teamId: team.id,
    name: 'example.com',
    region: config.AWS_REGION,
    dkimSelector: config.DKIM_SELECTOR,
    verified: true,
  });
  const running: RunningWorker[] = [];
  const replicas: WorkerDeps[] = [];

  const waitFor: TestWorkerEnv['waitFor'] = (probe, timeoutMs = 15_000) => waitUntil(probe, { timeoutMs, intervalMs: 50 });
  const sendEventsInFlight = new Set<Promise<unknown>>();

  return {
    config,
    deps,
    ses,
    teamId: team.id,
    domain: { id: domain.id, name: domain.name, region: domain.region },
    createEmails: async (drafts) => {
      const created = await insertAndEnqueueEmails(
        deps,
        drafts.map((d) => ({
          teamId: team.id,
          domainId: domain.id,
          region: domain.region,
          source: 'API' as const,
          from: `Sender <hello@${domain.name}>`,
          to: ['to@example.net'],
          subject: 'Hello',
          text: 'Hello text',
          ...d,
        })),
      );
      return created.map((c) => c.id);
    },
    start: async () => {
      const r = await startWorker(deps, { redeclareEveryMs: 1000 });
      running.push(r);
      return r;
    },
    replica: (extra = {}) => {
      const r = createWorkerDeps(configFor(extra));
      replicas.push(r);
      return r;
    },
    email: async (id) => (await deps.db.email.findUnique({ where: { id } }))!,
    events: async (id) =>
      (await deps.db.emailEvent.findMany({ where: { emailId: id }, orderBy: { id: 'asc' } })).map((e) => ({
        status: e.status,
        data: e.data,
      })),
    waitFor,
    publishSendEvents: () => {
      ses.onAccept = (message) => {
        const emailId = emailIdOf(message.raw);
        if (!emailId) return;
        const processed = sleep(20)
          // What the API does with a Send event as it arrives (docs/worker.md, "In doubt"): one
          // conditional statement, a no-op for the emails whose worker recorded them first.
          .then(() => recordSendEventAcceptance(deps.sql, { type: 'Send', headerEmailId: emailId, sesMessageId: message.messageId }))
          .catch(() => undefined)
          .finally(() => sendEventsInFlight.delete(processed));
        sendEventsInFlight.add(processed);
      };
    },
    sweptSince: async (since) => {
      const maintenance = deps.queues.get(queueNames.maintenance);
      await waitFor(() => completedSince(maintenance, 'sweep-unsent-emails', since));
    },
    close: async () => {
      // A test that failed half-way may leave its worker processes running: they would go on
      // polling a dropped database and load the rest of the run. Gone before the database is dropped.
      await stopSpawnedWorkers();
      ses.onAccept = null;
      await Promise.all(sendEventsInFlight);
      for (const r of running) await r.close();
      for (const r of replicas) await closeWorkerDeps(r);
      await deleteRedisPrefix(deps.redis, prefix).catch(() => undefined);
      await closeWorkerDeps(deps);
      await ses.close();
      await dropDatabase(databaseUrl);
    },
  };
}

/** SES's Send event for a message, as SNS delivers it (event publishing format). */
export function sesSendEvent(emailId: string, sesMessageId: string): SesEventJob {
  const timestamp = new Date().toISOString();
  return {
    snsMessageId: randomUUID(),
    topicArn: 'arn:aws:sns:us-east-1:123456789012:mailrail-ses-events',
    message: JSON.stringify({
      eventType: 'Send',
      mail: {
        timestamp,
        source: 'hello@example.com',
        messageId: sesMessageId,
        destination: ['to@example.net'],
        headers: [{ name: EMAIL_ID_HEADER, value: emailId }],
      },
      send: {},
    }),
  };
}

/**
 * The worker as a real process (`node --import tsx apps/worker/src/main.ts`, what
 * `npm run start:worker` runs) on the test env's database, Redis prefix and fake SES, with the
 * harness's fast timings. No metrics port, so several can run at once.
 */
const spawned = new Set<ChildProcess>();
const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
/** SIGKILLs the worker processes still running and waits until each has exited. */
async function stopSpawnedWorkers(): Promise<void> {
  const running = [...spawned].filter(alive);
  spawned.clear();
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
// And if jest tears the test process down without reaching close() (no waiting possible there).
process.once('exit', () => {
  for (const child of spawned) if (alive(child)) child.kill('SIGKILL');
});

export function spawnWorkerProcess(
  env: TestWorkerEnv,
  opts: { extraEnv?: Record<string, string>; logLevel?: string; stdio?: StdioOptions } = {},
): ChildProcess {
  const root = path.resolve(__dirname, '../../../..');
  const c = env.config;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'apps/worker/src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: opts.logLevel ?? 'silent',
      DATABASE_URL: c.DATABASE_URL,
      ...redisEnvOf(c.redis),
      REDIS_PREFIX: c.REDIS_PREFIX,
      SES_ENDPOINT: c.SES_ENDPOINT,
      SES_RATE_LIMIT: '1000',
      SES_TIMEOUT_MS: '1500',
      SEND_LEASE_SECONDS: '5',
      SES_IN_DOUBT_WAIT_SECONDS: '2',
      SEND_SWEEP_CRON: '* * * * * *',
      WORKER_METRICS_PORT: '0',
      ...opts.extraEnv,
    },
    stdio: opts.stdio ?? ['ignore', 'pipe', 'pipe'],
  });
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  return child;
}

/**
 * Resolves with the time (epoch ms) the worker process logged that it started: its periodic jobs,
 * send lanes and the rest are running. The process must log at level info (spawnWorkerProcess's
 * logLevel) with stdout piped.
 */
export function workerStarted(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('mailrail worker started')) return;
      child.stdout!.off('data', onData);
      resolve(Date.now());
    };
    child.stdout!.on('data', onData);
    child.once('exit', () => reject(new Error(`worker exited before it started:\n${output}`)));
  });
}

/** Resolves with the signal that ended the child process (null when it exited by itself). */
export const exitSignal = (child: ChildProcess) =>
  new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));

/**
 * SES stops accepting; once every message SES accepted for the campaign (addresses at `domain`) is
 * recorded in the database, the worker is SIGKILLed and SES accepts again. Answers the exit signal.
 */
export async function freezeSesAndKill(env: TestWorkerEnv, child: ChildProcess, campaignId: string, domain: string) {
  const atSes = () => env.ses.messages.filter((m) => m.destination.to[0].endsWith(`@${domain}`)).length;
  env.ses.setRule(() => ({ kind: 'timeout', delayMs: 60_000 }));
  await sleep(300);
  await env.waitFor(async () => (await env.deps.db.email.count({ where: { campaignId, sesEmailId: { not: null } } })) === atSes(), 20_000);
  const exit = exitSignal(child);
  child.kill('SIGKILL');
  const signal = await exit;
  env.ses.setRule(null);
  return signal;
}
