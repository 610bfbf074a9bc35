import { prepareTemplateDatabase } from './databases';
import { startLocalRedisCluster, type LocalRedisCluster } from './redis-cluster';

declare global {
  // The cluster of MAILRAIL_TEST_REDIS=cluster, stopped by global-teardown.ts (same process).
  var mailrailTestRedisCluster: LocalRedisCluster | undefined;
}

/**
 * Once per jest run: the migrated template database every test clones, and, with
 * MAILRAIL_TEST_REDIS=cluster, a local six-node Redis Cluster that every test reaches through
 * REDIS_CLUSTER_NODES (set here, before the test workers start, so they inherit it; testConfig and
 * the fault stack read it). docs/redis.md, "The test suite on a cluster".
 */
export default async function globalSetup(): Promise<void> {
  await prepareTemplateDatabase();
  if (process.env.MAILRAIL_TEST_REDIS === 'cluster' && !process.env.REDIS_CLUSTER_NODES) {
    const cluster = await startLocalRedisCluster();
    globalThis.mailrailTestRedisCluster = cluster;
    process.env.REDIS_CLUSTER_NODES = cluster.nodes;
    delete process.env.REDIS_URL;
  }
}
