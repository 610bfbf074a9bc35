import { Cluster } from 'ioredis';
import { testRedisTarget } from '@mailrail/testing/redis';
import { createRedis, type Redis } from './client';
import { redisScript, runScript } from './script';

const ECHO_KEY = redisScript(`return {KEYS[1], ARGV[1]}`, 1);

/**
 * How many servers have the script loaded. On a cluster SCRIPT EXISTS goes to one node of
 * ioredis' choosing, while a script is loaded only on the master that ran it: ask every master.
 */
async function serversKnowing(redis: Redis, sha1: string): Promise<number> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const answers = await Promise.all(servers.map((s) => s.script('EXISTS', sha1) as Promise<number[]>));
  return answers.filter(([known]) => known === 1).length;
}

describe('runScript', () => {
  const redis = createRedis(testRedisTarget());
  afterAll(() => redis.disconnect());

  it('runs a script Redis does not know yet (NOSCRIPT) by its text, then by its SHA-1', async () => {
    // A private script text, so no other test can have loaded it.
    const script = redisScript(`return {KEYS[1], ARGV[1], '${Date.now()}-${Math.random()}'}`, 1);
    expect(await serversKnowing(redis, script.sha1)).toBe(0);
    expect(((await runScript(redis, script, ['k', 'a'])) as string[]).slice(0, 2)).toEqual(['k', 'a']);
    expect(await serversKnowing(redis, script.sha1)).toBe(1);
    expect(((await runScript(redis, script, ['k2', 'b'])) as string[]).slice(0, 2)).toEqual(['k2', 'b']);
  });

  it('passes other errors through', async () => {
    const broken = redisScript(`return redis.call('NO_SUCH_COMMAND')`, 0);
    await expect(runScript(redis, broken, [])).rejects.toThrow(/NO_SUCH_COMMAND|Unknown Redis command/i);
    expect(await runScript(redis, ECHO_KEY, ['x', 1])).toEqual(['x', '1']);
  });
});
