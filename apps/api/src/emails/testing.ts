import { Queue } from 'bullmq';
import { queueNames } from '@mailrail/platform/queue/queues';
import type { TestApi } from '../testing/api-harness';

/** A separate Queue (own connection) on the same name and prefix: proves jobs really landed in Redis. */
export function sendQueueOf(api: TestApi, region = api.config.AWS_REGION): Queue {
  const url = new URL(api.config.REDIS_URL);
  return new Queue(queueNames.send(region, 'transactional'), {
    connection: { host: url.hostname, port: Number(url.port || 6379) },
    prefix: api.config.REDIS_PREFIX,
  });
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');
