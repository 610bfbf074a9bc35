import { Queue } from 'bullmq';
import { queueNames, queuePrefix } from '@mailrail/platform/queue/queues';
import { createRedis } from '@mailrail/platform/redis/client';
import type { TestApi } from '../testing/api-harness';

/**
 * A separate Queue (own connection, closed with the queue) on the same name and prefix: proves jobs
 * really landed in Redis (one Redis or a cluster).
 */
export function sendQueueOf(api: TestApi, region = api.config.AWS_REGION): Queue {
  const name = queueNames.send(region, 'transactional');
  const redis = createRedis(api.config.redis);
  const queue = new Queue(name, { connection: redis, prefix: queuePrefix(api.config, name) });
  const close = queue.close.bind(queue);
  queue.close = async () => {
    await close();
    redis.disconnect();
  };
  return queue;
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');
