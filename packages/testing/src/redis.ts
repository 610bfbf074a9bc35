import { randomBytes } from 'node:crypto';
import type { RedisTarget } from '@mailrail/platform/config/schema';
import { scanTargets, type Redis } from '@mailrail/platform/redis/client';

/** The single Redis of the tests (REDIS_URL, else the local one), for a test that needs one node. */
export function testRedisUrl(): string {
  return process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/**
 * The Redis every test reaches unless it names its own: the cluster the global setup started
 * (MAILRAIL_TEST_REDIS=cluster sets REDIS_CLUSTER_NODES, docs/redis.md), else REDIS_URL, else the
 * local one.
 */
export function testRedisEnv(): Record<string, string> {
  const nodes = process.env.REDIS_CLUSTER_NODES;
  return nodes ? { REDIS_CLUSTER_NODES: nodes } : { REDIS_URL: testRedisUrl() };
}

/** The Redis of testRedisEnv as a connection target (for createRedis, in a test without a configuration). */
export function testRedisTarget(): RedisTarget {
  const { REDIS_CLUSTER_NODES: nodes, REDIS_URL: url } = testRedisEnv();
  if (!nodes) return { mode: 'standalone', url };
  return {
    mode: 'cluster',
    nodes: nodes.split(',').map((n) => {
      const [host, port] = n.split(':');
      return { host, port: Number(port) };
    }),
  };
}

/** The environment that reaches `target` (a URL, the cluster nodes or the sentinels), for a child process. */
export function redisEnvOf(target: RedisTarget): Record<string, string> {
  const list = (nodes: { host: string; port: number }[]) => nodes.map((n) => `${n.host}:${n.port}`).join(',');
  if (target.mode === 'cluster') return { REDIS_CLUSTER_NODES: list(target.nodes) };
  if (target.mode === 'sentinel') return { REDIS_SENTINELS: list(target.sentinels), REDIS_SENTINEL_NAME: target.name };
  return { REDIS_URL: target.url };
}

export function testRedisPrefix(): string {
  return `mrt_${randomBytes(5).toString('hex')}`;
}

/**
 * Deletes every key under the prefix (BullMQ queues included), on every master of a cluster; answers
 * how many. `only`: just the keys it accepts (a partial loss).
 */
export async function deleteRedisPrefix(redis: Redis, prefix: string, only?: (key: string) => boolean): Promise<number> {
  let deleted = 0;
  // A cluster node that is down (a failover test killed it) would hold a worker connection forever.
  // A standalone client is scanned whatever its status: a new one is still connecting and queues
  // the commands (filtered out, the benches' cleanup deleted nothing and left millions of keys).
  const nodes = redis.isCluster ? scanTargets(redis).filter((n) => n.status === 'ready') : scanTargets(redis);
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      const keys = only ? found.filter(only) : found;
      // One DEL per key (in one pipeline): on a cluster the keys of one batch sit in many slots.
      if (keys.length) {
        const results = (await node.pipeline(keys.map((k) => ['del', k])).exec()) ?? [];
        for (const [, n] of results) deleted += Number(n) || 0;
      }
    } while (cursor !== '0');
  }
  return deleted;
}
