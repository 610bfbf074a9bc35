import { loadConfig } from '@mailrail/platform/config/load';
import type { Config } from '@mailrail/platform/config/schema';
import { testRedisEnv } from './redis';

/** Configuration for a test: the test's own database and Redis prefix, quiet logs. */
export function testConfig(databaseUrl: string, redisPrefix: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    // A test that points at a cluster or sentinels names no URL: one Redis mode at a time.
    ...(env.REDIS_CLUSTER_NODES || env.REDIS_SENTINELS || env.REDIS_URL ? {} : testRedisEnv()),
    REDIS_PREFIX: redisPrefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    API_RATE_LIMIT: '0',
    DATABASE_POOL_SIZE: '5',
    // Tests with a non-loopback PUBLIC_URL need a SECRET the configuration accepts.
    SECRET: 'test-secret-7f3a9c1e5b2d8f4a6c0e9b7d3f1a5c8e',
    ...env,
  });
}
