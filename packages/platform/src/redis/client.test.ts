import { Worker } from 'bullmq';
import { startTcpProxyFor, type TcpProxy } from '@mailrail/testing/tcp-proxy';
import { testRedisPrefix, testRedisUrl } from '@mailrail/testing/redis';
import { waitFor } from '@mailrail/testing/wait-for';
import { createRedis, duplicateRedis, type Redis } from './client';

// A connection that lost Redis and waits to reconnect must still close: ioredis 6.0 alone leaves
// it 'reconnecting' for ever, and a worker stopped during an outage never finished stopping. Redis
// goes away behind a TCP proxy this file cuts; the shared server keeps running.

let proxy: TcpProxy;
const soon = (what: string) => ({ timeoutMs: 5_000, what });
const clients: Redis[] = [];

const ended = (redis: Redis) =>
  new Promise<void>((resolve) => {
    if (redis.status === 'end') resolve();
    else redis.once('end', () => resolve());
  });

beforeAll(async () => {
  proxy = await startTcpProxyFor(testRedisUrl());
});
afterEach(async () => {
  await proxy.restore();
  await Promise.all(
    clients.splice(0).map((c) => {
      const end = ended(c);
      c.disconnect();
      return end;
    }),
  );
});
afterAll(() => proxy.close());

const connect = async () => {
  const redis = createRedis(proxy.route('redis://127.0.0.1:6379'), { forWorker: true });
  redis.on('error', () => undefined);
  clients.push(redis);
  await waitFor(() => redis.status === 'ready', soon('the connection to be ready'));
  return redis;
};
it('ends a connection that is waiting to reconnect', async () => {
  const redis = await connect();
  await proxy.cut();
  await waitFor(() => redis.status === 'reconnecting', soon('the connection to wait for a retry'));
  const end = ended(redis);
  redis.disconnect();
  await end;
  expect(redis.status).toBe('end');
});

it('ends a duplicate the same way (BullMQ blocks on duplicates)', async () => {
  const copy = duplicateRedis(await connect());
  copy.on('error', () => undefined);
  clients.push(copy);
  await waitFor(() => copy.status === 'ready', soon('the duplicate to be ready'));
  await proxy.cut();
  await waitFor(() => copy.status === 'reconnecting', soon('the duplicate to wait for a retry'));
  const end = ended(copy);
  copy.disconnect();
  await end;
});

it('still reconnects when Redis comes back and nobody disconnected', async () => {
  const redis = await connect();
  await proxy.cut();
  await waitFor(() => redis.status === 'reconnecting', soon('the connection to wait for a retry'));
  await proxy.restore();
  await waitFor(() => redis.status === 'ready', soon('the connection to come back'));
  expect(await redis.ping()).toBe('PONG');
});

it('lets a BullMQ worker close while Redis is away', async () => {
  const connection = await connect();
  const worker = new Worker(`close-${testRedisPrefix()}`, async () => undefined, { connection, prefix: testRedisPrefix() });
  worker.on('error', () => undefined);
  await worker.waitUntilReady();
  // Blocked in BZPOPMIN on its own duplicate of the connection.
  await new Promise((r) => setTimeout(r, 200));
  await proxy.cut();
  await waitFor(() => connection.status === 'reconnecting', soon('the connection to wait for a retry'));
  await expect(
    Promise.race([worker.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('hung'), 10_000).unref())]),
  ).resolves.toBe('closed');
}, 20_000);
