// How fast BullMQ alone can take send jobs on this machine: addBulk of 100 jobs at a time,
// `parallel` calls in flight. This bounds batch sends, which must enqueue one job per email.
//   npx tsx bench/emails/addbulk-ceiling.ts [jobs=20000] [parallel=4]
import os from 'node:os';
import { createQueueFactory, queueNames } from '@mailrail/platform/queue/queues';
import { createRedis } from '@mailrail/platform/redis/client';
import { newId } from '@mailrail/platform/ids';

async function main() {
  const total = Number(process.argv[2] ?? 20000);
  const parallel = Number(process.argv[3] ?? 4);
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const queue = createQueueFactory(redis, `bench_addbulk_${process.pid}`).get(queueNames.send('us-east-1', 'transactional'));
  const chunk = () =>
    Array.from({ length: 100 }, () => {
      const id = newId();
      return { name: 'send', data: { emailId: id }, opts: { jobId: id } };
    });
  await queue.addBulk(chunk()); // warm-up
  let left = total / 100;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (left-- > 0) await queue.addBulk(chunk());
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  console.log(
    `addBulk ceiling: ${Math.round(total / seconds)} jobs/s (${total} jobs, ${parallel} in flight, load average ${os.loadavg()[0].toFixed(2)})`,
  );
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
