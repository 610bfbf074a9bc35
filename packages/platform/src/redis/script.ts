import { createHash } from 'node:crypto';
import type { Redis } from './client';

// A Lua script sent by its SHA-1 (EVALSHA) instead of its text on every call: fewer bytes on
// each hot-path call (the idempotency check, the rate windows) and no hashing of the text by
// Redis each time. A Redis that does not know the script yet (restart, SCRIPT FLUSH) answers
// NOSCRIPT, and the call is made once with the text, which loads it for the next ones.

export interface RedisScript {
  source: string;
  sha1: string;
  numberOfKeys: number;
}

export function redisScript(source: string, numberOfKeys: number): RedisScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex'), numberOfKeys };
}

export async function runScript(redis: Redis, script: RedisScript, keysAndArgs: (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha1, script.numberOfKeys, ...keysAndArgs);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return redis.eval(script.source, script.numberOfKeys, ...keysAndArgs);
  }
}
