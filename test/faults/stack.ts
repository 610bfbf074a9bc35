// A real mailrail stack for fault scenarios: the API and the worker as child processes (the same
// entry points production runs), on a fresh database cloned from the test template and a unique
// Redis prefix, sending to a fake SES that lives in this runner process so the scenario can inject
// faults and read exactly what SES accepted.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { createQueueFactory, queueNames, type QueueFactory } from '@mailrail/platform/queue/queues';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { insertAndEnqueueEmails, type EmailDraft } from '@mailrail/domain/emails/create-emails';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { loadConfig } from '@mailrail/platform/config/load';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { emailIdOf, startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { deleteRedisPrefix, testRedisEnv, testRedisPrefix } from '@mailrail/testing/redis';
import { waitFor as waitUntil } from '@mailrail/testing/wait-for';
import { portIn, spawnListening } from '@mailrail/testing/spawn-listening';

export const repoRoot = path.resolve(__dirname, '../..');
const logDir = path.join(repoRoot, '.cache/faults');

// Production timings would make every fault take minutes to heal: short leases, a sweeper every
// second, fast retries (the worker harness uses the same values).
const FAST_ENV: Record<string, string> = {
  SES_RATE_LIMIT: '1000',
  SES_TIMEOUT_MS: '3000',
  SEND_LEASE_SECONDS: '15',
  SEND_RETRY_BASE_MS: '200',
  SEND_RETRY_MAX_MS: '1000',
  SES_THROTTLE_PAUSE_MS: '100',
  SEND_SWEEP_CRON: '*/2 * * * * *',
  SEND_SWEEP_BATCH: '1000',
  SEND_CONCURRENCY: '20',
  SEND_MAX_ATTEMPTS: '50',
  // Campaign mail whose worker died mid-call waits this long for SES's Send event (none comes in
  // the scenarios without an SNS publisher) before it is sent again.
  SES_IN_DOUBT_WAIT_SECONDS: '10',
};

export interface Team {
  id: number;
  domain: { id: number; name: string; region: string };
  apiKey: string;
  auth: { Authorization: string };
}

export interface Stack {
  name: string;
  databaseUrl: string;
  databaseName: string;
  prefix: string;
  ses: FakeSes;
  db: Db;
  redis: Redis;
  queues: QueueFactory;
  team: Team;
  /** The URL of the API startApi started last (addApi's each have their own): its port is the one it bound. */
  readonly apiUrl: string;
  /** Another team with its own domain and key. */
  addTeam(name: string, domainName: string): Promise<Team>;
  startApi(): Promise<void>;
  /** Starts one more API process, on its own port, and answers its URL (a second replica). */
  addApi(): Promise<string>;
  /** SIGKILLs the API startApi started (a request stuck on the CPU would stall everything after it). */
  killApi(): Promise<void>;
  startWorker(): Promise<ChildProcess>;
  killWorker(signal?: NodeJS.Signals): Promise<void>;
  /** Stores emails for the main team and enqueues their jobs, as the API does. */
  createEmails(n: number, draft?: Partial<EmailDraft>): Promise<string[]>;
  /** How many messages the fake SES accepted per X-Usesend-Email-ID. */
  sesCountsByEmailId(): Map<string, number>;
  /** Waits until the fake SES holds every id at least once, or the timeout. */
  waitUntilDelivered(ids: string[], timeoutMs: number): Promise<boolean>;
  /**
   * Waits until no email of `of` can be sent again: each one's SES answer recorded (or failed)
   * and none left mid-call ("in doubt", sesCallStartedAt set) or waiting for a worker, and no send
   * job left in the queues. After a kill, a duplicate could only come from such an email or job;
   * false at the timeout.
   */
  waitUntilSettled(of: { ids: string[] } | { campaignId: string }, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export { setTimeout as sleep } from 'node:timers/promises';

/** Probes may hit a process that is being killed or restarted: an error counts as "not yet". */
export const waitFor = <T>(probe: () => Promise<T | null | undefined | false>, timeoutMs: number, what = 'condition') =>
  waitUntil(probe, { timeoutMs, what, ignoreErrors: true });

// Read by the scenarios with the stack's other helpers.
export { emailIdOf };

let templateReady: Promise<void> | null = null;

export interface StackOptions {
  /** Modules the API process loads first (`node --import`), e.g. the SNS certificate of a scenario that plays SNS. */
  apiImports?: string[];
  /** The fake SES stamps arrivals off the runner's thread (FakeSesOptions): for the rate measurements. */
  stampSesArrivalsOffThread?: boolean;
}

export async function startStack(name: string, env: Record<string, string> = {}, opts: StackOptions = {}): Promise<Stack> {
  templateReady ??= prepareTemplateDatabase();
  await templateReady;
  mkdirSync(logDir, { recursive: true });
  const ses = await startFakeSes({ stampArrivalsOffThread: opts.stampSesArrivalsOffThread });
  const databaseUrl = await createTestDatabase();
  const databaseName = new URL(databaseUrl).pathname.slice(1);
  const prefix = testRedisPrefix();
  const childEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '10',
    // The scenario's own Redis (a cluster: REDIS_CLUSTER_NODES), else the tests' (testRedisEnv).
    ...(env.REDIS_CLUSTER_NODES || env.REDIS_SENTINELS ? {} : testRedisEnv()),
    REDIS_PREFIX: prefix,
    LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'warn',
    API_RATE_LIMIT: '0',
    SES_ENDPOINT: ses.url,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // Each API binds a port of its own and reports it (spawnListening); no worker binds a metrics port.
    PORT: '0',
    HOST: '127.0.0.1',
    WORKER_METRICS_PORT: '0',
    ...FAST_ENV,
    ...env,
  };
  const config = loadConfig(childEnv);
  const db = createDb(databaseUrl, 5);
  const redis = createRedis(config.redis);
  const queues = createQueueFactory(createRedis(config.redis, { forWorker: true }), config);
  const children = new Set<ChildProcess>();
  let worker: ChildProcess | null = null;
  let api: ChildProcess | null = null;
  let workerRuns = 0;
  let apiRuns = 0;
  let extraApis = 0;

  // `node --import tsx`, not the tsx CLI: the CLI runs the app in a child process, so a SIGKILL
  // sent to it would leave the app running as an orphan.
  // The young generation's size, as production's start scripts give it: it sets how often the
  // process collects garbage, and so how late a paced send may leave.
  const appArgs = (app: 'api' | 'worker') => {
    const imports = app === 'api' ? (opts.apiImports ?? []).flatMap((m) => ['--import', m]) : [];
    return [youngGenerationFlag(app), '--import', 'tsx', ...imports, path.join(repoRoot, `apps/${app}/src/main.ts`)];
  };
  const track = (child: ChildProcess) => {
    children.add(child);
    child.on('exit', () => children.delete(child));
    return child;
  };

  const spawnWorker = (tag: string) => {
    const log = createWriteStream(path.join(logDir, `${name}-${tag}.log`));
    const child = spawn(process.execPath, appArgs('worker'), { cwd: repoRoot, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    return track(child);
  };

  /** An API process on a port of its own, ready when /health answers; answers it and its URL. */
  const launchApi = async (tag: string) => {
    const log = createWriteStream(path.join(logDir, `${name}-${tag}.log`));
    const api = await spawnListening({
      command: process.execPath,
      args: appArgs('api'),
      cwd: repoRoot,
      env: childEnv,
      message: 'mailrail API listening',
      onOutput: (chunk) => log.write(chunk),
      retainOutput: false,
    }).catch((err: Error) => {
      log.end();
      throw err;
    });
    api.child.once('close', () => log.end());
    track(api.child);
    const url = `http://127.0.0.1:${portIn(api.listening, 'port')}`;
    await waitFor(
      async () => {
        if (api.child.exitCode !== null) throw new Error('API exited at start');
        return (await fetch(`${url}/health`)).ok;
      },
      60_000,
      'the API to answer /health',
    );
    return { child: api.child, url };
  };

  const addTeam = async (teamName: string, domainName: string): Promise<Team> => {
    const team = await createTeam(db, teamName);
    const domain = await insertDomain(db, config.SECRET, {
      teamId: team.id,
      name: domainName,
      region: config.AWS_REGION,
      dkimSelector: config.DKIM_SELECTOR,
      verified: true,
    });
    const { apiKey } = await createApiKey(db, { teamId: team.id });
    return {
      id: team.id,
      domain: { id: domain.id, name: domain.name, region: domain.region },
      apiKey,
      auth: { Authorization: `Bearer ${apiKey}` },
    };
  };

  const team = await addTeam('Faults', 'faults.example.com');
  let apiUrl: string | null = null;

  const stack: Stack = {
    name,
    databaseUrl,
    databaseName,
    prefix,
    ses,
    db,
    redis,
    queues,
    team,
    get apiUrl() {
      if (!apiUrl) throw new Error('stack.apiUrl: startApi() first');
      return apiUrl;
    },
    addTeam,
    startApi: async () => {
      apiRuns += 1;
      const started = await launchApi(apiRuns === 1 ? 'api' : `api-run${apiRuns}`);
      api = started.child;
      apiUrl = started.url;
    },
    addApi: async () => {
      extraApis += 1;
      return (await launchApi(`api${extraApis + 1}`)).url;
    },
    killApi: async () => {
      const a = api;
      if (!a || a.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        a.once('exit', () => resolve());
        a.kill('SIGKILL');
      });
    },
    startWorker: async () => {
      workerRuns += 1;
      worker = spawnWorker(`worker${workerRuns}`);
      return worker;
    },
    killWorker: async (signal = 'SIGKILL') => {
      const w = worker;
      if (!w || w.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        w.once('exit', () => resolve());
        w.kill(signal);
      });
    },
    createEmails: async (n, draft = {}) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i += 1000) {
        const drafts: EmailDraft[] = [];
        for (let j = i; j < Math.min(n, i + 1000); j++) {
          drafts.push({
            teamId: team.id,
            domainId: team.domain.id,
            region: team.domain.region,
            source: 'API',
            from: `Faults <hello@${team.domain.name}>`,
            to: [`r${j}@example.net`],
            subject: `Fault ${j}`,
            text: 'hello',
            ...draft,
          });
        }
        ids.push(...(await insertAndEnqueueEmails({ db, queues }, drafts)).map((c) => c.id));
      }
      return ids;
    },
    sesCountsByEmailId: () => {
      const counts = new Map<string, number>();
      for (const m of ses.messages) {
        const id = emailIdOf(m.raw);
        if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
    waitUntilDelivered: async (ids, timeoutMs) => {
      try {
        await waitFor(
          async () => {
            const counts = stack.sesCountsByEmailId();
            return ids.every((id) => counts.has(id));
          },
          timeoutMs,
          'every email at SES',
        );
        return true;
      } catch {
        return false;
      }
    },
    waitUntilSettled: async (of, timeoutMs) => {
      const open = () =>
        db.email.count({
          where: {
            ...('ids' in of ? { id: { in: of.ids } } : { campaignId: of.campaignId }),
            OR: [{ sesCallStartedAt: { not: null } }, { sesEmailId: null, latestStatus: { not: 'FAILED' } }],
          },
        });
      // A job a killed worker held comes back once BullMQ sees it stalled: it must find its emails
      // recorded, so the queues must be empty too.
      const queued = async () => {
        let n = 0;
        for (const lane of ['transactional', 'marketing'] as const) {
          const counts = await queues
            .get(queueNames.send(stack.team.domain.region, lane))
            .getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
          n += Object.values(counts).reduce((a, b) => a + b, 0);
        }
        return n;
      };
      return waitFor(
        async () => (await open()) === 0 && (await queued()) === 0,
        timeoutMs,
        'every email recorded and no send job left',
      ).then(
        () => true,
        () => false,
      );
    },
    close: async () => {
      for (const child of [...children]) {
        if (child.exitCode !== null) continue;
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
          child.kill('SIGTERM');
        });
      }
      await queues.closeAll().catch(() => undefined);
      await deleteRedisPrefix(redis, prefix).catch(() => undefined);
      redis.disconnect();
      await db.$disconnect().catch(() => undefined);
      await ses.close();
      await dropDatabase(databaseUrl).catch(() => undefined);
    },
  };
  return stack;
}

/** Counts of emails that reached SES 0 times (lost) and more than once (duplicates). */
export function lossAndDuplicates(ids: string[], counts: Map<string, number>): { lost: number; duplicates: number } {
  let lost = 0;
  let duplicates = 0;
  for (const id of ids) {
    const n = counts.get(id) ?? 0;
    if (n === 0) lost++;
    if (n > 1) duplicates += n - 1;
  }
  return { lost, duplicates };
}

export interface ScenarioResult {
  pass: boolean;
  figures: string;
}

export function resultLine(n: string, name: string, r: ScenarioResult): string {
  return `scenario ${n} ${name}: ${r.pass ? 'PASS' : 'FAIL'} ${r.figures}`;
}

/** For a failing line: the database's view of the emails SES never received. */
export async function describeLost(stack: Stack, ids: string[]): Promise<string> {
  const counts = stack.sesCountsByEmailId();
  const lost = ids.filter((id) => !counts.has(id));
  if (lost.length === 0) return '';
  const rows = await stack.db.email.findMany({
    where: { id: { in: lost.slice(0, 50) } },
    select: { latestStatus: true, sendAttempts: true, sendLeaseUntil: true, scheduledAt: true, sendJobId: true },
  });
  const jobStates = await Promise.all(
    lost.slice(0, 5).map((id) =>
      stack.queues
        .get(queueNames.send(stack.team.domain.region, 'transactional'))
        .getJobState(id)
        .catch(() => 'error'),
    ),
  );
  return ` lost_sample=${JSON.stringify(rows.slice(0, 5))} job_states=${jobStates.join(',')}`;
}

/** Starts `n` worker processes and waits until `total` of them serve both send lanes. */
export async function addWorkers(stack: Stack, n: number, total: number): Promise<void> {
  for (let i = 0; i < n; i++) await stack.startWorker();
  const region = stack.team.domain.region;
  await waitFor(
    async () => {
      for (const lane of ['transactional', 'marketing'] as const) {
        if ((await stack.queues.get(queueNames.send(region, lane)).getWorkersCount()) < total) return false;
      }
      return true;
    },
    180_000,
    `${total} workers on both lanes`,
  );
}

/**
 * Two emails per lane per worker, delivered before a measurement: each process's first sends open
 * its sockets. Answers their ids (to leave them out of the figures), or null if they never arrived.
 */
export async function warmUp(stack: Stack, workers: number): Promise<string[] | null> {
  const warm = [...(await stack.createEmails(workers * 2)), ...(await stack.createEmails(workers * 2, { lane: 'marketing' }))];
  return (await stack.waitUntilDelivered(warm, 60_000)) ? warm : null;
}
