// mailrail on a Redis Cluster (docs/redis.md): six local redis-server processes, 3 masters and 3
// replicas. Each queue's keys share one slot (its hash tag), the queues spread over the masters,
// every multi-key script runs without CROSSSLOT, and an email sent through the API with
// REDIS_CLUSTER_NODES is delivered to SES by the worker, once, even across a FLUSHALL.
import type { ChildProcess } from 'node:child_process';
import request from 'supertest';
import { createAuthFailureLimit } from '@mailrail/domain/teams/auth-failure-limit';
import { createTeamRateLimit } from '@mailrail/domain/teams/team-rate-limit';
import { withIdempotency } from '@mailrail/domain/emails/idempotency';
import type { Config } from '@mailrail/platform/config/schema';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { createLogger } from '@mailrail/platform/log/logger';
import { createQueueFactory, queueNames, type QueueFactory } from '@mailrail/platform/queue/queues';
import { createRedis, scanTargets, type Redis } from '@mailrail/platform/redis/client';
import { countInWindow } from '@mailrail/platform/redis/fixed-window';
import { testConfig } from '@mailrail/testing/config';
import { waitFor } from '@mailrail/testing/wait-for';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { startLocalRedisCluster, type ClusterNode, type LocalRedisCluster } from '@mailrail/testing/redis-cluster';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { spawnWorkerProcess, startTestWorkerEnv, workerStarted, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

let cluster: LocalRedisCluster;
let databaseUrl: string;
let db: Db;
let config: Config;
let redis: Redis;

beforeAll(async () => {
  cluster = await startLocalRedisCluster();
  databaseUrl = await createTestDatabase();
  db = createDb(databaseUrl, 2);
  config = testConfig(databaseUrl, testRedisPrefix(), { REDIS_CLUSTER_NODES: cluster.nodes });
  redis = createRedis(config.redis);
});

afterAll(async () => {
  redis?.disconnect();
  await db?.$disconnect();
  if (databaseUrl) await dropDatabase(databaseUrl);
  await cluster?.stop();
});

/** The master that serves `slot`, as host:port. */
async function masterOfSlot(slot: number): Promise<string> {
  const ranges = await redis.cluster('SLOTS');
  const [, , master] = ranges.find(([from, to]) => slot >= from && slot <= to) ?? [];
  if (!master) throw new Error(`no master serves slot ${slot}`);
  return `${master[0]}:${master[1]}`;
}

describe('configuration', () => {
  it('chooses cluster mode with hash tags from REDIS_CLUSTER_NODES', () => {
    expect(config.redis).toMatchObject({ mode: 'cluster', nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) });
    expect(config.redisHashTags).toBe(true);
    expect(redis.isCluster).toBe(true);
  });
});

describe('queues on a cluster', () => {
  let queues: QueueFactory;
  afterAll(async () => {
    await queues?.closeAll();
    await deleteRedisPrefix(redis, config.REDIS_PREFIX);
  });

  it("keeps each queue's keys in one slot and spreads the queues over at least two masters", async () => {
    queues = createQueueFactory(redis, config);
    const names = [
      queueNames.send('us-east-1', 'transactional'),
      queueNames.send('us-east-1', 'marketing'),
      queueNames.send('eu-west-1', 'transactional'),
      queueNames.campaigns,
      queueNames.sesEvents,
      queueNames.webhooks,
      queueNames.domains,
      queueNames.maintenance,
      queueNames.contactImports,
      queueNames.campaignPreparation,
    ];
    for (const name of names) {
      const q = queues.get(name);
      await q.add('now', { n: 1 });
      await q.add('later', { n: 2 }, { delay: 60_000 });
    }
    const mastersUsed = new Set<string>();
    for (const name of names) {
      const keys: string[] = [];
      for (const node of scanTargets(redis)) {
        let cursor = '0';
        do {
          const [next, found] = await node.scan(cursor, 'MATCH', `${config.REDIS_PREFIX}:{${name}}:*`, 'COUNT', 1000);
          cursor = next;
          keys.push(...found);
        } while (cursor !== '0');
      }
      // Jobs, the wait list, the delayed set, the meta hash, the id counter...
      expect(keys.length).toBeGreaterThanOrEqual(4);
      const slots = new Set(await Promise.all(keys.map(async (k) => Number(await redis.cluster('KEYSLOT', k)))));
      expect([...slots]).toHaveLength(1);
      mastersUsed.add(await masterOfSlot([...slots][0]));
    }
    expect(mastersUsed.size).toBeGreaterThanOrEqual(2);
  });
});

describe('multi-key scripts on a cluster', () => {
  const log = createLogger('silent', 'scale-test');

  it('runs the idempotency scripts (result and lock keys) in one slot', async () => {
    const scope = { prefix: config.REDIS_PREFIX, hashTags: true, teamId: 1, key: 'k{with}braces', body: { a: 1 } };
    let runs = 0;
    const op = async () => (runs++, ['email-1']);
    expect(await withIdempotency({ redis, db }, scope, op)).toEqual(['email-1']);
    expect(await withIdempotency({ redis, db }, scope, op)).toEqual(['email-1']);
    expect(runs).toBe(1);
  });

  it('would fail with CROSSSLOT without the hash tag (the check can fail)', async () => {
    const scope = { prefix: config.REDIS_PREFIX, hashTags: false, teamId: 1, key: 'untagged', body: { a: 1 } };
    await expect(withIdempotency({ redis, db }, scope, async () => ['x'])).rejects.toThrow(/CROSSSLOT/);
  });

  it('runs the fixed window, the team rate limit and the auth-failure limit', async () => {
    const key = `${config.REDIS_PREFIX}:window:test`;
    expect((await countInWindow(redis, key, 1000)).count).toBe(1);
    expect((await countInWindow(redis, key, 1000)).count).toBe(2);
    const rate = createTeamRateLimit(redis, { prefix: config.REDIS_PREFIX, log });
    const hit = await rate.hit(7, 2);
    // null would mean Redis refused the count (the limiter swallows errors).
    expect(hit).toMatchObject({ limit: 2, remaining: 1, exceeded: false });
    const failures = createAuthFailureLimit(redis, { prefix: config.REDIS_PREFIX, log, max: 2 });
    expect((await failures.reserve('10.0.0.1')).refusedFor).toBe(0);
    expect((await failures.reserve('10.0.0.1')).refusedFor).toBe(0);
    expect((await failures.reserve('10.0.0.1')).refusedFor).toBeGreaterThan(0);
  });
});

describe('API and worker with REDIS_CLUSTER_NODES', () => {
  let env: TestWorkerEnv;
  let api: TestApi;

  beforeAll(async () => {
    env = await startTestWorkerEnv({ REDIS_CLUSTER_NODES: cluster.nodes });
    api = await startTestApi(
      { REDIS_CLUSTER_NODES: cluster.nodes, SES_ENDPOINT: env.ses.url, API_RATE_LIMIT: '1000' },
      { databaseUrl: env.config.DATABASE_URL, redisPrefix: env.config.REDIS_PREFIX },
    );
    await api.addDomain(api.team.teamId, 'cluster.example.com');
    await env.start();
  });

  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  const send = (subject: string, key?: string) => {
    const r = request(api.app).post('/api/v1/emails').set(api.team.auth);
    return (key ? r.set('Idempotency-Key', key) : r).send({ from: 'hello@cluster.example.com', to: 'to@example.net', subject, text: 'Hi' });
  };
  const atSes = (subject: string) => env.ses.messages.filter((m) => m.raw.includes(`Subject: ${subject}`)).length;
  const sent = (id: string) => env.waitFor(async () => (await env.email(id)).latestStatus === 'SENT', 30_000);

  it('delivers an email sent through the API to SES, once', async () => {
    const res = await send('Through the cluster');
    expect(res.status).toBe(200);
    await sent(res.body.emailId);
    expect(atSes('Through the cluster')).toBe(1);
  });

  it('answers the same email after the whole cluster was flushed, and keeps delivering', async () => {
    const first = await send('Flushed once', 'k-cluster-flush');
    expect(first.status).toBe(200);
    await sent(first.body.emailId);
    for (const master of scanTargets(redis)) await master.flushall();
    const retry = await send('Flushed once', 'k-cluster-flush');
    expect(retry.status).toBe(200);
    expect(retry.body.emailId).toBe(first.body.emailId);
    expect(await env.deps.db.email.count({ where: { subject: 'Flushed once' } })).toBe(1);
    // The worker lost its queues with the flush and goes on: a new email still reaches SES.
    const after = await send('After the flush');
    await sent(after.body.emailId);
    expect(atSes('Flushed once')).toBe(1);
    expect(atSes('After the flush')).toBe(1);
  });

  it('refuses a bad key with 403 (the auth-failure limit runs on the cluster)', async () => {
    const res = await request(api.app).post('/api/v1/emails').set({ Authorization: 'Bearer us_nope_nope' }).send({});
    expect(res.status).toBe(403);
  });
});

describe('worker processes with REDIS_CLUSTER_NODES', () => {
  let env: TestWorkerEnv;
  beforeAll(async () => {
    env = await startTestWorkerEnv({ REDIS_CLUSTER_NODES: cluster.nodes });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('two worker processes (the production entry point) share the queues: every email at SES exactly once', async () => {
    const ids = await env.createEmails(Array.from({ length: 40 }, (_, i) => ({ to: [`r${i}@example.net`] })));
    // A generous SES timeout: a send that times out after the fake SES accepted it is retried and
    // reaches SES twice (SES has no idempotency), which a cold process on a loaded machine can hit.
    // Level info: workerStarted reads the start line.
    const opts = { logLevel: 'info', extraEnv: { SES_TIMEOUT_MS: '15000', SEND_LEASE_SECONDS: '60' } };
    const children: ChildProcess[] = [spawnWorkerProcess(env, opts), spawnWorkerProcess(env, opts)];
    let output = '';
    for (const c of children) c.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exits = children.map((c) => new Promise<number | null>((resolve) => c.once('exit', (code) => resolve(code))));
    const started = children.map(workerStarted);
    await env.waitFor(
      async () => (await env.deps.db.email.count({ where: { id: { in: ids }, latestStatus: 'SENT' } })) === ids.length,
      60_000,
    );
    // On a loaded machine one process can send all 40 while the other still boots; a SIGTERM
    // before its handlers exist would end it by the signal (exit code null), not by its shutdown.
    await Promise.all(started);
    for (const c of children) c.kill('SIGTERM');
    expect(await Promise.all(exits)).toEqual([0, 0]);
    const perEmail = new Map<string, number>();
    for (const m of env.ses.messages) {
      const id = /X-Usesend-Email-ID: (\S+)/i.exec(m.raw)?.[1];
      if (id) perEmail.set(id, (perEmail.get(id) ?? 0) + 1);
    }
    expect({ perEmail: ids.map((id) => perEmail.get(id) ?? 0), output }).toEqual({ perEmail: ids.map(() => 1), output });
  });
});

// Last in the file: these change the cluster's topology.
describe('failover of the master that owns the send queue', () => {
  let env: TestWorkerEnv;
  let api: TestApi;

  beforeAll(async () => {
    env = await startTestWorkerEnv({ REDIS_CLUSTER_NODES: cluster.nodes });
    api = await startTestApi(
      { REDIS_CLUSTER_NODES: cluster.nodes, SES_ENDPOINT: env.ses.url },
      { databaseUrl: env.config.DATABASE_URL, redisPrefix: env.config.REDIS_PREFIX },
    );
    await api.addDomain(api.team.teamId, 'failover.example.com');
    await env.start();
  });

  afterAll(async () => {
    // The nodes killed below stay down, and a worker connection waiting on one never settles:
    // closing is bounded and the database dropped here in any case (jest.scale.config.ts also
    // forces the exit).
    const bounded = (work: () => Promise<unknown>) =>
      Promise.race([work().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 15_000).unref())]);
    await bounded(async () => api?.close());
    await bounded(async () => env?.close());
    if (env) await dropDatabase(env.config.DATABASE_URL).catch(() => undefined);
  });

  const topology = () => cluster.topology();
  const ownerOf = (slot: number) => cluster.ownerOf(slot);

  const send = (subject: string) =>
    request(api.app)
      .post('/api/v1/emails')
      .set(api.team.auth)
      .send({ from: 'hello@failover.example.com', to: 'to@example.net', subject, text: 'Hi' });
  const deliveredOnce = async (subject: string) => {
    const res = await send(subject);
    expect(res.status).toBe(200);
    await env.waitFor(async () => (await env.email(res.body.emailId)).latestStatus === 'SENT', 60_000);
    expect(env.ses.messages.filter((m) => m.raw.includes(`Subject: ${subject}`))).toHaveLength(1);
  };

  it('CLUSTER FAILOVER (lossless), then kill -9 of the new master: mail goes on, no process restarted', async () => {
    const queue = queueNames.send(env.config.AWS_REGION, 'transactional');
    const slot = Number(await redis.cluster('KEYSLOT', `${env.config.REDIS_PREFIX}:{${queue}}:wait`));
    await deliveredOnce('Before any failover');

    const before = (await ownerOf(slot))!;
    const replica = (await topology()).find((n) => n.masterId === before.id)!;
    expect(await cluster.cli(replica.port, 'cluster', 'failover')).toBe('OK');
    await waitFor(async () => (await ownerOf(slot))?.port === replica.port, { timeoutMs: 30_000, what: 'the replica to take over' });
    await deliveredOnce('After a lossless failover');

    await cluster.kill(replica.port);
    await waitFor(async () => (await ownerOf(slot))?.port === before.port, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'the old master to be promoted again',
    });
    await deliveredOnce('After a crashed master');
  });

  it('a lossy failover of the master holding an Idempotency-Key record: the retry answers the same email, sent once', async () => {
    // A key whose master still has a live replica (the test above killed one node).
    const nodes = await topology();
    let key = '';
    let master: ClusterNode | undefined;
    let replica: ClusterNode | undefined;
    for (let i = 0; !replica; i++) {
      key = `k-lossy-${i}`;
      const slot = Number(await redis.cluster('KEYSLOT', `${env.config.REDIS_PREFIX}:idem:{${api.team.teamId}:${key}}`));
      master = nodes.find((n) => n.master && n.slots.some(([a, b]) => slot >= a && slot <= b));
      replica = nodes.find((n) => n.masterId === master?.id);
    }
    const resultKey = `${env.config.REDIS_PREFIX}:idem:{${api.team.teamId}:${key}}`;
    // The replica may take over however far behind it is; it is stopped and its replication link
    // cut before the record is written, so the record lives on the master alone when it dies.
    await cluster.cli(replica.port, 'config', 'set', 'cluster-replica-validity-factor', '0');
    cluster.pause(replica.port);
    await cluster.cli(master!.port, 'client', 'kill', 'type', 'replica');
    const body = { from: 'hello@failover.example.com', to: 'to@example.net', subject: 'Lossy failover', text: 'Hi' };
    const post = () => request(api.app).post('/api/v1/emails').set(api.team.auth).set('Idempotency-Key', key).send(body);
    const first = await post();
    expect(first.status).toBe(200);
    expect(await redis.exists(resultKey)).toBe(1);
    await cluster.kill(master!.port);
    cluster.resume(replica.port);
    await waitFor(async () => (await ownerOf(Number(await redis.cluster('KEYSLOT', resultKey))))?.port === replica!.port, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'the stale replica to take over',
    });
    // The failover lost the record: only PostgreSQL remembers the key now.
    await waitFor(async () => (await redis.exists(resultKey)) === 0 || 'present', { timeoutMs: 10_000, ignoreErrors: true });
    expect(await redis.exists(resultKey)).toBe(0);
    const retry = await post();
    expect(retry.status).toBe(200);
    expect(retry.body.emailId).toBe(first.body.emailId);
    expect(await env.deps.db.email.count({ where: { subject: 'Lossy failover' } })).toBe(1);
    await env.waitFor(async () => (await env.email(first.body.emailId)).latestStatus === 'SENT', 60_000);
    expect(env.ses.messages.filter((m) => m.raw.includes('Subject: Lossy failover'))).toHaveLength(1);
  });
});
