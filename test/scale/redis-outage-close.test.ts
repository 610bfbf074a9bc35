// A Redis Cluster client that lost every node and waits to reconnect must still close
// (packages/platform/src/redis/client.ts, endsWhenDisconnected): ioredis 6.0 alone leaves it
// 'disconnecting' for ever. The standalone and Sentinel case is in client.test.ts.
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { startLocalRedisCluster, type LocalRedisCluster } from '@mailrail/testing/redis-cluster';
import { waitFor } from '@mailrail/testing/wait-for';

let cluster: LocalRedisCluster;
let redis: Redis;

beforeAll(async () => {
  cluster = await startLocalRedisCluster();
});
afterAll(async () => {
  redis?.disconnect();
  await cluster?.stop();
});

it('ends a cluster client that is waiting to reconnect', async () => {
  redis = createRedis({ mode: 'cluster', nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) }, { forWorker: true });
  redis.on('error', () => undefined);
  await waitFor(() => redis.status === 'ready', { timeoutMs: 10_000, what: 'the cluster client to be ready' });
  await cluster.stop();
  await waitFor(() => redis.status === 'reconnecting', { timeoutMs: 10_000, what: 'the client to wait for a retry' });
  const end = new Promise<void>((resolve) => redis.once('end', () => resolve()));
  redis.disconnect();
  await end;
  expect(redis.status).toBe('end');
});
