/** Stops the Redis Cluster global-setup.ts started for MAILRAIL_TEST_REDIS=cluster. */
export default async function globalTeardown(): Promise<void> {
  await globalThis.mailrailTestRedisCluster?.stop();
}
