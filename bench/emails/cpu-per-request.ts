// CPU per accepted email, the figure that survives a loaded machine: the compiled API (run
// `npm run build` first) and the plain floor each take a fixed number of requests, alternately,
// and each server's CPU time (user + system, from /proc) is divided by the requests it answered.
// Also counts PostgreSQL transactions per request (pg_stat_database.xact_commit of the bench
// database), which shows how well group commit combines requests.
//   npx tsx bench/emails/cpu-per-request.ts [--requests 20000] [--rounds 3] [--connections 32] [--batch] [--env K=V] [--baseline old/dist/api/main.js] [--baseline-env K=V]
// --baseline also runs another build of the API (e.g. main's, copied aside) in the same rounds, to
// measure one change's effect against the load of the moment; --baseline-env (repeatable) sets the
// baseline's settings only (e.g. --baseline dist/api/main.js --baseline-env LOG_LEVEL=info).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { createDb } from '@mailrail/platform/db/client';
import { dropDatabase, ensureDatabase } from '@mailrail/platform/db/admin';
import { createRedis } from '@mailrail/platform/redis/client';
import { prepareTemplateDatabase, templateDatabaseName, testServerUrl } from '@mailrail/testing/databases';
import { deleteRedisPrefix } from '@mailrail/testing/redis';

interface CannonResult {
  requests: { total: number };
  latency: { p99: number };
  non2xx: number;
  errors: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (o: Record<string, unknown>) => Promise<CannonResult>;

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const apiEnv = Object.fromEntries(
  process.argv.flatMap((a, i) => (a === '--env' ? [process.argv[i + 1].split(/=(.*)/s).slice(0, 2)] : [])),
) as Record<string, string>;
const BATCH = process.argv.includes('--batch');
const PER_REQUEST = BATCH ? 100 : 1;
const REQUESTS = arg('requests', BATCH ? 300 : 20_000);
const ROUNDS = arg('rounds', 3);
const CONNECTIONS = arg('connections', BATCH ? 16 : 32);
const API_PORT = 3910;
const BASE_PORT = 3911;
const baselineAt = process.argv.indexOf('--baseline');
const BASELINE = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
const baselineEnv = Object.fromEntries(
  process.argv.flatMap((a, i) => (a === '--baseline-env' ? [process.argv[i + 1].split(/=(.*)/s).slice(0, 2)] : [])),
) as Record<string, string>;
const PLAIN_PORT = 3912;
const root = path.resolve(__dirname, '../..');

function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function start(cmd: string[], env: Record<string, string>): ChildProcess {
  return spawn(cmd[0], cmd.slice(1), {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
}

async function waitForHttp(url: string) {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timeout waiting for ${url}`);
}

async function main() {
  await prepareTemplateDatabase();
  const dbUrl = `${testServerUrl}/mailrail_bench_cpu`;
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
  const prefix = `bench_cpu_${process.pid}`;
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    API_RATE_LIMIT: '0',
    NODE_ENV: 'production',
    SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  };
  const api = start([process.execPath, 'dist/api/main.js'], { ...env, ...apiEnv, PORT: String(API_PORT) });
  const base = BASELINE ? start([process.execPath, BASELINE], { ...env, ...apiEnv, ...baselineEnv, PORT: String(BASE_PORT) }) : undefined;
  const plain = start([process.execPath, '--import', 'tsx', 'bench/emails/plain-floor.ts'], {
    ...env,
    PORT: String(PLAIN_PORT),
    FLOOR_TEAM_ID: String(team.id),
  });
  const stats = new Client({ connectionString: dbUrl });
  await stats.connect();
  const commits = async () =>
    Number(
      (await stats.query<{ n: string }>(`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0].n,
    );
  const email = {
    to: 'someone@dest.example.org',
    from: 'Bench <hello@bench.example.com>',
    subject: 'Hello',
    html: '<p>Hello there</p>',
    text: 'Hello there',
  };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
  const body = JSON.stringify(BATCH ? Array.from({ length: 100 }, () => email) : email);
  const measure = async (server: ChildProcess, url: string, amount: number) => {
    const cpu0 = cpuSeconds(server.pid);
    const tx0 = await commits();
    const r = await autocannon({ url, method: 'POST', headers, body, connections: CONNECTIONS, amount });
    const cpu = cpuSeconds(server.pid) - cpu0;
    const tx = (await commits()) - tx0 - 1; // the stats query itself
    return {
      cpuMicrosPerEmail: (cpu * 1e6) / (r.requests.total * PER_REQUEST),
      txPerRequest: tx / r.requests.total,
      p99: r.latency.p99,
      bad: r.non2xx + r.errors,
    };
  };
  try {
    await waitForHttp(`http://127.0.0.1:${API_PORT}/health`);
    await waitForHttp(`http://127.0.0.1:${PLAIN_PORT}/nothing`);
    if (base) await waitForHttp(`http://127.0.0.1:${BASE_PORT}/health`);
    const baseUrl = `http://127.0.0.1:${BASE_PORT}/api/v1/emails${BATCH ? '/batch' : ''}`;
    const apiUrl = `http://127.0.0.1:${API_PORT}/api/v1/emails${BATCH ? '/batch' : ''}`;
    const plainUrl = `http://127.0.0.1:${PLAIN_PORT}/floor${BATCH ? '/batch' : ''}`;
    await measure(plain, plainUrl, Math.ceil(REQUESTS / 4));
    await measure(api, apiUrl, Math.ceil(REQUESTS / 4));
    if (base) await measure(base, baseUrl, Math.ceil(REQUESTS / 4));
    console.log(
      `| round | API CPU µs/email | plain floor CPU µs/email | API/floor CPU | API pg tx/request | API p99 ms | failed | baseline CPU µs/email | baseline/floor CPU |\n|---|---|---|---|---|---|---|---|---|`,
    );
    for (let round = 1; round <= ROUNDS; round++) {
      const f = await measure(plain, plainUrl, REQUESTS);
      const a = await measure(api, apiUrl, REQUESTS);
      const b = base ? await measure(base, baseUrl, REQUESTS) : undefined;
      const baseCols = b ? ` ${b.cpuMicrosPerEmail.toFixed(0)} | ${(b.cpuMicrosPerEmail / f.cpuMicrosPerEmail).toFixed(2)} |` : ' | |';
      console.log(
        `| ${round} | ${a.cpuMicrosPerEmail.toFixed(0)} | ${f.cpuMicrosPerEmail.toFixed(0)} | ${(a.cpuMicrosPerEmail / f.cpuMicrosPerEmail).toFixed(2)} | ${a.txPerRequest.toFixed(2)} | ${a.p99} | ${a.bad + f.bad + (b?.bad ?? 0)} |${baseCols}`,
      );
    }
  } finally {
    for (const child of [api, plain, base]) if (child && child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    await stats.end();
    const redis = createRedis('redis://127.0.0.1:6379');
    await deleteRedisPrefix(redis, prefix);
    redis.disconnect();
    await db.$disconnect();
    await new Promise((r) => setTimeout(r, 1000));
    await dropDatabase(dbUrl);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
