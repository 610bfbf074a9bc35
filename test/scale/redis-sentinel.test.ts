// mailrail behind Redis Sentinel (docs/redis.md): one master, one replica, three sentinels on
// loopback. The processes find the master through the sentinels, deliver mail through it, and
// follow a failover (SENTINEL FAILOVER) without a restart.
import request from 'supertest';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { testConfig } from '@mailrail/testing/config';
import { startLocalRedisSentinel, type LocalRedisSentinel } from '@mailrail/testing/redis-cluster';
import { testRedisPrefix } from '@mailrail/testing/redis';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

let sentinel: LocalRedisSentinel;
let env: TestWorkerEnv;
let api: TestApi;
let probe: Redis;

beforeAll(async () => {
  sentinel = await startLocalRedisSentinel();
  const redisEnv = { REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_NAME: sentinel.name };
  env = await startTestWorkerEnv(redisEnv);
  api = await startTestApi(
    { ...redisEnv, SES_ENDPOINT: env.ses.url },
    { databaseUrl: env.config.DATABASE_URL, redisPrefix: env.config.REDIS_PREFIX },
  );
  await api.addDomain(api.team.teamId, 'sentinel.example.com');
  await env.start();
  probe = createRedis(testConfig(env.config.DATABASE_URL, testRedisPrefix(), redisEnv).redis);
});

afterAll(async () => {
  probe?.disconnect();
  await api?.close();
  await env?.close();
  await sentinel?.stop();
});

const send = (subject: string) =>
  request(api.app)
    .post('/api/v1/emails')
    .set(api.team.auth)
    .send({ from: 'hello@sentinel.example.com', to: 'to@example.net', subject, text: 'Hi' });
const sent = (id: string) => env.waitFor(async () => (await env.email(id)).latestStatus === 'SENT', 30_000);
const servingPort = async (redis: Redis) => Number(/tcp_port:(\d+)/.exec(await redis.info('server'))?.[1]);

it('chooses sentinel mode, without hash tags, and reaches the master', async () => {
  expect(env.config.redis).toMatchObject({ mode: 'sentinel', name: sentinel.name });
  expect(env.config.redisHashTags).toBe(false);
  expect(await servingPort(probe)).toBe(sentinel.masterPort);
});

it('delivers an email sent through the API', async () => {
  const res = await send('Through the sentinels');
  expect(res.status).toBe(200);
  await sent(res.body.emailId);
  expect(env.ses.messages.filter((m) => m.raw.includes('Subject: Through the sentinels'))).toHaveLength(1);
});

it('follows a failover to the replica: writes go on and mail is still delivered', async () => {
  const sentinelPort = Number(sentinel.sentinels.split(',')[0].split(':')[1]);
  expect(await sentinel.cli(sentinelPort, 'sentinel', 'failover', sentinel.name)).toBe('OK');
  await waitFor(
    async () =>
      (await sentinel.cli(sentinelPort, 'sentinel', 'get-master-addr-by-name', sentinel.name)).endsWith(String(sentinel.replicaPort)),
    {
      timeoutMs: 30_000,
      what: 'the sentinels to promote the replica',
    },
  );
  // A write on the old master would fail READONLY; the client reconnects through the sentinels.
  await waitFor(
    async () => (await probe.set(`${env.config.REDIS_PREFIX}:probe`, '1')) === 'OK' && (await servingPort(probe)) === sentinel.replicaPort,
    {
      timeoutMs: 30_000,
      ignoreErrors: true,
      what: 'the client to follow the new master',
    },
  );
  const res = await send('After the failover');
  expect(res.status).toBe(200);
  await sent(res.body.emailId);
  expect(env.ses.messages.filter((m) => m.raw.includes('Subject: After the failover'))).toHaveLength(1);
});
