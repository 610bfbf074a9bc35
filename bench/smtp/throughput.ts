// SMTP relay throughput: messages/s over 16 concurrent connections (each authenticated once over
// STARTTLS and reused for every message, as Nodemailer's pool does), and the time from the end of
// each message's DATA to the relay's 250, beside POST /api/v1/emails with as many connections in
// the same run. The relay and the API run as their own processes (tsx), the worker is not running.
// The load generators (Nodemailer's SMTP client, autocannon) run in this process; their CPU per
// message is printed too, so a saturated client shows. Redis is a private redis-server on a free
// port when one is installed (else the shared one), so its socket reads and commands per message
// count only this bench.
//   npx tsx bench/smtp/throughput.ts [--duration 10] [--connections 16] [--rounds 3]   (BENCH_PROFILE=<dir>: CPU profiles)
// Writes bench/out/smtp.json and prints a markdown summary.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { createDb } from '@mailrail/platform/db/client';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { generateDevCertificate } from '@mailrail/platform/tls/self-signed';
import { dropDatabase, ensureDatabase } from '@mailrail/platform/db/admin';
import { prepareTemplateDatabase, templateDatabaseName, testServerUrl } from '@mailrail/testing/databases';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { freePort } from '@mailrail/testing/free-port';
import { writeResult } from '../report-kit';
import { cpuSeconds } from '../process-stats';

// autocannon ships no types; this is the part we use.
interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (o: Record<string, unknown>) => Promise<CannonResult>;

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const DURATION = arg('duration', 10);
const CONNECTIONS = arg('connections', 16);
const ROUNDS = arg('rounds', 3);
const root = path.resolve(__dirname, '../..');
const SECRET = 'bench-secret-bench-secret-bench-secret-0123';
const DOMAIN = 'bench.example.com';

/** CPU seconds of this process (the load generator). */
const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Redis's counters so far (INFO stats): commands executed (those inside Lua scripts included), and
 * socket reads (a batch of commands a client wrote at once; on a busy machine, writes of one client
 * that queued up meanwhile arrive in one read, so this is a floor of the clients' writes).
 */
async function redisCounters(redis: Redis): Promise<{ commands: number; reads: number }> {
  const info = await redis.info('stats');
  const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1] ?? NaN);
  return { commands: field('total_commands_processed'), reads: field('total_reads_processed') };
}

/** Counter deltas per item, less our own INFO call. */
function perItem(before: { commands: number; reads: number }, after: { commands: number; reads: number }, items: number) {
  const per = (n: number) => Number(((n - 1) / Math.max(1, items)).toFixed(2));
  return { commands: per(after.commands - before.commands), reads: per(after.reads - before.reads) };
}

/** A private redis-server on a free loopback port, so that nothing else's commands are counted; null when none is installed. */
async function startPrivateRedis(): Promise<{ url: string; stop: () => Promise<void> } | null> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const failed = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(true));
    setTimeout(() => resolve(false), 300);
  });
  if (failed) return null;
  const url = `redis://127.0.0.1:${port}`;
  const probe = createRedis(url);
  await probe.ping();
  probe.disconnect();
  return {
    url,
    stop: async () => {
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await done;
    },
  };
}

// BENCH_PROFILE=<dir> writes a V8 CPU profile of each server process there.
function start(script: string, env: Record<string, string>): ChildProcess {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_PROFILE)}`] : [];
  return spawn(process.execPath, [...profile, '--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 15_000))]);
}

async function waitUntil(probe: () => Promise<boolean>, child: ChildProcess, what: string) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timeout waiting for ${what}`);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

const html = `<html><body><h1>Hello</h1>${'<p>Some paragraph of a typical transactional email, with a link to <a href="https://example.com/x">example</a>.</p>'.repeat(6)}</body></html>`;
const text = 'Hello, this is the plain text part of a typical transactional email.\n'.repeat(6);

interface SmtpRound {
  messagesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  messages: number;
  errors: number;
  serverCpuMsPerMessage: number;
  clientCpuMsPerMessage: number;
  redisCommandsPerMessage: number;
  redisReadsPerMessage: number;
}

/** One connection per client, opened and authenticated once, then messages one after another until `until`. */
async function smtpRound(
  port: number,
  ca: string,
  apiKey: string,
  template: string,
  seconds: number,
  server: ChildProcess,
  seq: { n: number },
  redis: Redis,
): Promise<SmtpRound> {
  const connections = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const c = new SMTPConnection({ host: '127.0.0.1', port, requireTLS: true, tls: { ca: [ca] } });
      await new Promise<void>((resolve, reject) => {
        c.once('error', reject);
        c.connect(() => c.login({ user: 'mailrail', pass: apiKey }, (err) => (err ? reject(err) : resolve())));
      });
      return c;
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  const cpu0 = cpuSeconds(server.pid);
  const client0 = ownCpuSeconds();
  const redis0 = await redisCounters(redis);
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    connections.map(async (c) => {
      while (performance.now() < until) {
        // A distinct Message-ID per message: a repeated one would be answered as a resubmit.
        const id = String(++seq.n).padStart(12, '0');
        const message = Readable.from([Buffer.from(template.replace('MESSAGEID', id))]);
        let dataEnd = 0;
        message.on('end', () => (dataEnd = performance.now()));
        const ok = await new Promise<boolean>((resolve) =>
          c.send({ from: `hello@${DOMAIN}`, to: [`to${id}@dest.example.org`] }, message, (err, info) =>
            resolve(!err && /^250 2\.0\.0 OK /.test(info.response ?? '')),
          ),
        );
        if (ok) latencies.push(performance.now() - dataEnd);
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(server.pid) - cpu0;
  const clientCpu = ownCpuSeconds() - client0;
  const redisUse = perItem(redis0, await redisCounters(redis), latencies.length + errors);
  for (const c of connections) c.quit();
  latencies.sort((a, b) => a - b);
  return {
    messagesPerSec: Math.round(latencies.length / elapsed),
    p50Ms: Number(percentile(latencies, 50).toFixed(2)),
    p99Ms: Number(percentile(latencies, 99).toFixed(2)),
    messages: latencies.length,
    errors,
    serverCpuMsPerMessage: Number(((cpu * 1000) / Math.max(1, latencies.length)).toFixed(3)),
    clientCpuMsPerMessage: Number(((clientCpu * 1000) / Math.max(1, latencies.length)).toFixed(3)),
    redisCommandsPerMessage: redisUse.commands,
    redisReadsPerMessage: redisUse.reads,
  };
}

async function httpRound(url: string, apiKey: string, seconds: number, server: ChildProcess, redis: Redis) {
  const cpu0 = cpuSeconds(server.pid);
  const client0 = ownCpuSeconds();
  const redis0 = await redisCounters(redis);
  const r = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ from: `Bench <hello@${DOMAIN}>`, to: 'someone@dest.example.org', subject: 'Hello', html, text }),
    connections: CONNECTIONS,
    duration: seconds,
  });
  const cpu = cpuSeconds(server.pid) - cpu0;
  const clientCpu = ownCpuSeconds() - client0;
  const redisUse = perItem(redis0, await redisCounters(redis), r.requests.total);
  return {
    requestsPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    serverCpuMsPerRequest: Number(((cpu * 1000) / Math.max(1, r.requests.total)).toFixed(3)),
    clientCpuMsPerRequest: Number(((clientCpu * 1000) / Math.max(1, r.requests.total)).toFixed(3)),
    redisCommandsPerRequest: redisUse.commands,
    redisReadsPerRequest: redisUse.reads,
  };
}

async function main() {
  await prepareTemplateDatabase();
  const dbUrl = `${testServerUrl}/mailrail_bench_smtp`;
  await dropDatabase(dbUrl);
  await ensureDatabase(dbUrl, templateDatabaseName());
  const prefix = `bench_smtp_${process.pid}`;
  const privateRedis = await startPrivateRedis();
  const redisUrl = privateRedis?.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = createRedis(redisUrl);
  const db = createDb(dbUrl, 2);
  const team = await createTeam(db, 'Bench');
  const { apiKey } = await createApiKey(db, { teamId: team.id, permission: 'SENDING' });
  await insertDomain(db, SECRET, { teamId: team.id, name: DOMAIN, region: 'us-east-1', dkimSelector: 'usesend', verified: true });

  const certificate = await generateDevCertificate('localhost');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mailrail-bench-smtp-'));
  writeFileSync(path.join(dir, 'cert.pem'), certificate.cert);
  writeFileSync(path.join(dir, 'key.pem'), certificate.key);
  const [apiPort, smtpPort] = [await freePort(), await freePort()];
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    API_RATE_LIMIT: '0',
    NODE_ENV: 'production',
    SECRET,
  };
  const api = start('apps/api/src/main.ts', { ...env, PORT: String(apiPort) });
  const relay = start('apps/smtp/src/main.ts', {
    ...env,
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtpPort),
    SMTPS_PORT: '0',
    SMTP_METRICS_PORT: '0',
    SMTP_TLS_CERT: path.join(dir, 'cert.pem'),
    SMTP_TLS_KEY: path.join(dir, 'key.pem'),
    SMTP_SERVER_NAME: 'localhost',
  });
  const template = (
    await new MailComposer({
      from: `Bench <hello@${DOMAIN}>`,
      to: 'someone@dest.example.org',
      subject: 'Hello',
      html,
      text,
      messageId: '<MESSAGEID@bench.example.com>',
    })
      .compile()
      .build()
  ).toString();

  const loadBefore = os.loadavg()[0];
  const smtpRuns: SmtpRound[] = [];
  const httpRuns: Awaited<ReturnType<typeof httpRound>>[] = [];
  const seq = { n: 0 };
  try {
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${apiPort}/health`)).ok, api, 'the API');
    await waitUntil(
      async () => {
        const c = new SMTPConnection({ host: '127.0.0.1', port: smtpPort, requireTLS: true, tls: { ca: [certificate.cert] } });
        return new Promise<boolean>((resolve) => {
          c.once('error', () => resolve(false));
          c.connect(() => (c.quit(), resolve(true)));
        });
      },
      relay,
      'the SMTP relay',
    );
    // Warm-up (JIT, pools, caches), then rounds alternating SMTP and HTTP so other load hits both alike.
    await smtpRound(smtpPort, certificate.cert, apiKey, template, 3, relay, seq, redis);
    await httpRound(`http://127.0.0.1:${apiPort}/api/v1/emails`, apiKey, 3, api, redis);
    for (let round = 0; round < ROUNDS; round++) {
      smtpRuns.push(await smtpRound(smtpPort, certificate.cert, apiKey, template, DURATION, relay, seq, redis));
      httpRuns.push(await httpRound(`http://127.0.0.1:${apiPort}/api/v1/emails`, apiKey, DURATION, api, redis));
    }
  } finally {
    await stop(relay);
    await stop(api);
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = await db.email.count();
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
  await privateRedis?.stop();
  await db.$disconnect();
  await dropDatabase(dbUrl);

  const median = <T>(xs: T[], key: (x: T) => number) => [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)];
  const smtp = median(smtpRuns, (r) => r.messagesPerSec);
  const http = median(httpRuns, (r) => r.requestsPerSec);
  // Rounds alternate, so a round's ratio compares the two under the same load from elsewhere.
  const ratios = smtpRuns.map((s, i) => s.messagesPerSec / httpRuns[i].requestsPerSec);
  const ratio = Number(median(ratios, (r) => r).toFixed(2));
  const machine = {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  const loadAverage = { before: Number(loadBefore.toFixed(2)), after: Number(os.loadavg()[0].toFixed(2)) };
  writeResult(
    'smtp',
    {
      smtpPerSec: smtp.messagesPerSec,
      smtpP99Ms: smtp.p99Ms,
      smtpP50Ms: smtp.p50Ms,
      smtpServerCpuMs: smtp.serverCpuMsPerMessage,
      smtpClientCpuMs: smtp.clientCpuMsPerMessage,
      smtpRedisCommands: smtp.redisCommandsPerMessage,
      smtpRedisReads: smtp.redisReadsPerMessage,
      httpPerSec: http.requestsPerSec,
      httpP99Ms: http.p99Ms,
      httpServerCpuMs: http.serverCpuMsPerRequest,
      httpRedisCommands: http.redisCommandsPerRequest,
      httpRedisReads: http.redisReadsPerRequest,
      smtpVsHttp: ratio,
    },
    {
      at: new Date().toISOString(),
      machine,
      loadAverage,
      durationSeconds: DURATION,
      connections: CONNECTIONS,
      rounds: { smtp: smtpRuns, http: httpRuns },
      rowsWritten: rows,
      redis: privateRedis ? 'private redis-server' : redisUrl,
    },
  );
  console.log(
    [
      `machine: ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGB} GB, node ${machine.node}; ${DURATION} s per round, ${CONNECTIONS} connections; load average ${loadAverage.before} -> ${loadAverage.after}; Redis: ${privateRedis ? 'private redis-server' : `${redisUrl} (shared: commands/message include others')`}`,
      '',
      '| round | SMTP messages/s | DATA end → 250 p50 ms | p99 ms | relay CPU ms/message | client CPU ms/message | Redis reads (commands)/message | errors | POST /api/v1/emails /s | p50 ms | p99 ms | API CPU ms/request | autocannon CPU ms/request | Redis reads (commands)/request | non-2xx |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...smtpRuns.map((s, i) => {
        const h = httpRuns[i];
        return `| ${i + 1} | ${s.messagesPerSec} | ${s.p50Ms} | ${s.p99Ms} | ${s.serverCpuMsPerMessage} | ${s.clientCpuMsPerMessage} | ${s.redisReadsPerMessage} (${s.redisCommandsPerMessage}) | ${s.errors} | ${h.requestsPerSec} | ${h.p50Ms} | ${h.p99Ms} | ${h.serverCpuMsPerRequest} | ${h.clientCpuMsPerRequest} | ${h.redisReadsPerRequest} (${h.redisCommandsPerRequest}) | ${h.non2xx} |`;
      }),
      '',
      `median round: SMTP ${smtp.messagesPerSec}/s (p99 ${smtp.p99Ms} ms, relay CPU ${smtp.serverCpuMsPerMessage} ms/message), HTTP ${http.requestsPerSec}/s (p99 ${http.p99Ms} ms, API CPU ${http.serverCpuMsPerRequest} ms/request); SMTP/HTTP per round ${ratios.map((r) => r.toFixed(2)).join(', ')}; rows written: ${rows}`,
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
