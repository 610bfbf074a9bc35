// What bench/emails/run.ts and bench/emails/cpu-per-request.ts share: the scratch database with a
// team, a SENDING key and a verified domain; the servers under test (the API, the plain floor)
// started as child processes on free loopback ports; one measured autocannon run per server with
// its CPU time from /proc; and the round loop that alternates the servers so outside load hits
// them alike.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { dropDatabase, ensureDatabase } from '@mailrail/platform/db/admin';
import { createRedis } from '@mailrail/platform/redis/client';
import { prepareTemplateDatabase, templateDatabaseName, testServerUrl } from '@mailrail/testing/databases';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { cpuSeconds, storesCpuSeconds } from '../process-stats';
import { httpSender, openLoop, type LoadClock, type OpenLoopRun, type SendRequest } from './open-loop';

export const root = path.resolve(__dirname, '../..');

/** `--name value` as a number, or the default. */
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

/** `--name value` as a string, or undefined. */
export function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** Every `--flag KEY=VALUE` (repeatable) as an environment, e.g. `--env EMAIL_COMMIT_CONCURRENCY=4`. */
export function envArgs(flag: string): Record<string, string> {
  return Object.fromEntries(
    process.argv.flatMap((a, i) => (a === `--${flag}` ? [process.argv[i + 1].split(/=(.*)/s).slice(0, 2)] : [])),
  ) as Record<string, string>;
}

/** The email every bench request sends (a batch is 100 of it). */
export const benchEmail = {
  to: 'someone@dest.example.org',
  from: 'Bench <hello@bench.example.com>',
  subject: 'Hello',
  html: '<p>Hello there</p>',
  text: 'Hello there',
};

export interface EmailBench {
  dbUrl: string;
  db: Db;
  teamId: number;
  /** The request headers: JSON and the SENDING key. */
  headers: Record<string, string>;
  /** The environment of every server: the scratch database, its own Redis prefix, production mode. */
  env: Record<string, string>;
  /** PostgreSQL transactions committed in the scratch database so far (pg_stat_database). */
  commits(): Promise<number>;
  /** Deletes the Redis keys and drops the database. */
  close(): Promise<void>;
}

/** A scratch database (named after `name` and this process) with a team, a SENDING key and a verified domain. */
export async function setUpEmailBench(name: string): Promise<EmailBench> {
  await prepareTemplateDatabase();
  const dbUrl = `${testServerUrl}/mailrail_bench_${name}_${process.pid}`;
  await dropDatabase(dbUrl);
  await ensureDatabase(dbUrl, templateDatabaseName());
  const db = createDb(dbUrl, 2);
  const team = await createTeam(db, 'Bench');
  const { apiKey } = await createApiKey(db, { teamId: team.id, permission: 'SENDING' });
  await insertDomain(db, 'dev-secret-change-me-dev-secret-change-me', {
    teamId: team.id,
    name: 'bench.example.com',
    region: 'us-east-1',
    dkimSelector: 'usesend',
    verified: true,
  });
  const prefix = `bench_${name}_${process.pid}`;
  const stats = new Client({ connectionString: dbUrl });
  await stats.connect();
  return {
    dbUrl,
    db,
    teamId: team.id,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    env: {
      DATABASE_URL: dbUrl,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      API_RATE_LIMIT: '0',
      NODE_ENV: 'production',
      SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      FLOOR_TEAM_ID: String(team.id),
    },
    async commits() {
      const { rows } = await stats.query<{ n: string }>(`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()`);
      // The statistics query is itself a transaction.
      return Number(rows[0].n) - 1;
    },
    async close() {
      await stats.end();
      const redis = createRedis('redis://127.0.0.1:6379');
      await deleteRedisPrefix(redis, prefix);
      redis.disconnect();
      await db.$disconnect();
      await dropDatabase(dbUrl);
    },
  };
}

/** A loopback port nobody listens on right now (benches of other checkouts may run beside this one). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface BenchServer {
  name: string;
  child: ChildProcess;
  base: string;
}

/**
 * Starts `args` (node arguments: flags and the entry) on a free port in its own process group and
 * waits until `readyPath` answers below 500.
 */
export async function startServer(name: string, args: string[], env: Record<string, string>, readyPath: string): Promise<BenchServer> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    try {
      if ((await fetch(base + readyPath)).status < 500) return { name, child, base };
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timeout waiting for ${name} at ${base}${readyPath}`);
}

/** SIGTERM to the server's process group, then waits (at most 10 s) for it to exit. */
export async function stopServer(server: BenchServer | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null) return;
  const done = new Promise((r) => server.child.once('exit', r));
  process.kill(-server.child.pid!, 'SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
}

// autocannon ships no types; this is the part we use.
interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (o: Record<string, unknown>) => Promise<CannonResult>;

export interface Load {
  /** Path under the server's base URL. */
  path: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Seconds, or else `amount` requests. */
  duration?: number;
  amount?: number;
  /** Requests per second offered in all (autocannon's overallRate); full speed without. */
  overallRate?: number;
  /** Emails in one request (100 for a batch). */
  emailsPerRequest?: number;
}

export interface Figures {
  requestsPerSec: number;
  emailsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time of the server process per request and per email, in microseconds: independent of other load. */
  serverCpuMicrosPerRequest: number;
  serverCpuMicrosPerEmail: number;
  /**
   * CPU time per request of PostgreSQL's and Redis's processes and of this load generator: on a
   * 2-core machine the servers share the cores with them, so the rates follow the sum.
   */
  postgresCpuMicrosPerRequest: number;
  redisCpuMicrosPerRequest: number;
  loadCpuMicrosPerRequest: number;
  /** PostgreSQL transactions per request, when the bench counts them. */
  txPerRequest?: number;
  /**
   * Open loop only: the 99th percentile of how late the generator itself handed each request to
   * node:http, in ms from when it was due. It shares the machine: when this is high, part of the
   * p99 is the generator's own waiting for a core, not the server's.
   */
  sendLagP99?: number;
}

/** What one load generator's run gives, before the server's CPU time is added (only the open loop knows its own lag). */
type LoadRun = Omit<OpenLoopRun, 'sendLagP99'> & Partial<Pick<OpenLoopRun, 'sendLagP99'>>;

/** Runs `generate` against `server` and adds the CPU time of the server, the stores and this process per request. */
async function withCpuTimes(
  server: BenchServer,
  load: Load,
  generate: () => Promise<LoadRun>,
  commits?: () => Promise<number>,
): Promise<Figures> {
  const perRequest = load.emailsPerRequest ?? 1;
  const cpu0 = cpuSeconds(server.child.pid);
  const stores0 = storesCpuSeconds();
  const load0 = process.cpuUsage();
  const tx0 = commits ? await commits() : 0;
  const r = await generate();
  const cpu = cpuSeconds(server.child.pid) - cpu0;
  const requests = Math.max(1, r.total);
  const perRequestMicros = (seconds: number) => Math.round((seconds * 1e6) / requests);
  const loadCpu = process.cpuUsage(load0);
  const stores = storesCpuSeconds();
  return {
    requestsPerSec: Math.round(r.perSecond),
    emailsPerSec: Math.round(r.perSecond * perRequest),
    p50: r.p50,
    p99: r.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    serverCpuMicrosPerRequest: Math.round((cpu * 1e6) / requests),
    serverCpuMicrosPerEmail: Math.round((cpu * 1e6) / (requests * perRequest)),
    postgresCpuMicrosPerRequest: perRequestMicros(stores.postgres - stores0.postgres),
    redisCpuMicrosPerRequest: perRequestMicros(stores.redis - stores0.redis),
    loadCpuMicrosPerRequest: perRequestMicros((loadCpu.user + loadCpu.system) / 1e6),
    ...(commits ? { txPerRequest: ((await commits()) - tx0) / requests } : {}),
    ...(r.sendLagP99 !== undefined ? { sendLagP99: r.sendLagP99 } : {}),
  };
}

/**
 * One autocannon run against one server: `load.connections` connections, each sending its next
 * request when the last is answered. With `overallRate` each connection still sends back to back
 * until it has made its share of the second, then waits for the next second (autocannon 9's
 * httpClient.js), so the rate comes as a burst at full speed each second: use `measureOpenLoop`
 * for a steady offered rate.
 */
export function measure(server: BenchServer, load: Load, commits?: () => Promise<number>): Promise<Figures> {
  return withCpuTimes(
    server,
    load,
    async () => {
      const r = await autocannon({
        url: server.base + load.path,
        method: 'POST',
        headers: load.headers,
        body: load.body,
        connections: load.connections,
        ...(load.amount ? { amount: load.amount } : { duration: load.duration ?? 10 }),
        ...(load.overallRate ? { overallRate: load.overallRate } : {}),
      });
      return {
        total: r.requests.total,
        perSecond: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
      };
    },
    commits,
  );
}

/**
 * An open-loop run (open-loop.ts): `rate` requests a second whether or not the earlier ones are
 * answered, over keep-alive connections opened as needed (at most 512), each timed from when it
 * was due: the percentiles of a steady offered load. autocannon has no such mode, and loadtest 8's
 * (requestsPerSecond) spins on setImmediate when the interval is under 1 ms, which took a core of
 * the 2 at 2,000/s.
 *
 * `warmUpSeconds` first offers the same rate, over the same connections, for that long, unmeasured:
 * the figures are then those of the steady state at that rate, not of the change from the load
 * before (run.ts measures right after rounds at full speed, whose garbage, open connections and
 * PostgreSQL work carry over into the first seconds). `send` and `clock` replace the HTTP client
 * and the clock in tests.
 */
export async function measureOpenLoop(
  server: BenchServer,
  load: Load,
  rate: number,
  opts: { warmUpSeconds?: number; send?: SendRequest; clock?: LoadClock } = {},
): Promise<Figures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const send = opts.send ?? httpSender(new URL(server.base + load.path), load.headers, Buffer.from(load.body), agent);
  try {
    if (opts.warmUpSeconds) await openLoop(send, rate, opts.warmUpSeconds, opts.clock);
    return await withCpuTimes(server, load, () => openLoop(send, rate, load.duration ?? 10, opts.clock));
  } finally {
    agent.destroy();
  }
}

/**
 * The round loop: each round runs every entry once, in order, so load from elsewhere on the
 * machine falls on all of them alike; answers each entry's figures, one per round.
 */
export async function alternate<K extends string>(rounds: number, runs: Record<K, () => Promise<Figures>>): Promise<Record<K, Figures[]>> {
  const out = Object.fromEntries(Object.keys(runs).map((k) => [k, [] as Figures[]])) as Record<K, Figures[]>;
  for (let round = 0; round < rounds; round++) {
    for (const key of Object.keys(runs) as K[]) out[key].push(await runs[key]());
  }
  return out;
}

/** Per-round ratios a/b of a figure (requests/s by default). */
export function ratios(a: Figures[], b: Figures[], key: (f: Figures) => number = (f) => f.requestsPerSec): number[] {
  return a.map((x, i) => key(x) / key(b[i]));
}

/** The middle element by `key` (the upper one of two). */
export function median<T>(xs: T[], key: (x: T) => number): T {
  return [...xs].sort((x, y) => key(x) - key(y))[Math.floor(xs.length / 2)];
}
