import { createRedis } from './client';
import { redisScript, runScript } from './script';

const ECHO_KEY = redisScript(`return {KEYS[1], ARGV[1]}`, 1);

describe('runScript', () => {
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  afterAll(() => redis.disconnect());

  it('runs a script Redis does not know yet (NOSCRIPT) by its text, then by its SHA-1', async () => {
    // A private script text, so no other test can have loaded it.
    const script = redisScript(`return {KEYS[1], ARGV[1], '${Date.now()}-${Math.random()}'}`, 1);
    expect(await redis.script('EXISTS', script.sha1)).toEqual([0]);
    expect(((await runScript(redis, script, ['k', 'a'])) as string[]).slice(0, 2)).toEqual(['k', 'a']);
    expect(await redis.script('EXISTS', script.sha1)).toEqual([1]);
    expect(((await runScript(redis, script, ['k2', 'b'])) as string[]).slice(0, 2)).toEqual(['k2', 'b']);
  });

  it('passes other errors through', async () => {
    const broken = redisScript(`return redis.call('NO_SUCH_COMMAND')`, 0);
    await expect(runScript(redis, broken, [])).rejects.toThrow(/NO_SUCH_COMMAND|Unknown Redis command/i);
    expect(await runScript(redis, ECHO_KEY, ['x', 1])).toEqual(['x', '1']);
  });
});
