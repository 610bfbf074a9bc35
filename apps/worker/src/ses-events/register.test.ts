import { QueueEvents } from 'bullmq';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { createQueueFactory, queueNames, type QueueFactory } from '@mailrail/platform/queue/queues';
import { createRedis, duplicateRedis, type Redis } from '@mailrail/platform/redis/client';
import { newId } from '@mailrail/platform/ids';
import { sesEventJobOptions, type SesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { foldCounterDeltas } from '@mailrail/domain/ses-events/counter-deltas';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { waitFor } from '@mailrail/testing/wait-for';
import type { Worker } from 'bullmq';
import { registerSesEventProcessing } from './register';

// The BullMQ wiring on real Redis and PostgreSQL: a queued SNS notification becomes a status.
let url: string;
let db: Db;
let redis: Redis;
let workerRedis: Redis;
let queues: QueueFactory;
let worker: Worker;
let events: QueueEvents;
let eventsRedis: Redis;
const prefix = testRedisPrefix();

beforeAll(async () => {
  url = await createTestDatabase();
  db = createDb(url, 4);
  redis = createRedis('redis://127.0.0.1:6379');
  workerRedis = createRedis('redis://127.0.0.1:6379', { forWorker: true });
  queues = createQueueFactory(redis, prefix);
  worker = registerSesEventProcessing({ connection: workerRedis, prefix, db, concurrency: 4 });
  eventsRedis = duplicateRedis(workerRedis);
  events = new QueueEvents(queueNames.sesEvents, { connection: eventsRedis, prefix });
  await events.waitUntilReady();
});
afterAll(async () => {
  await worker.close();
  await events.close();
  await queues.closeAll();
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
  workerRedis.disconnect();
  eventsRedis.disconnect();
  await db.$disconnect();
  await dropDatabase(url);
});

function sesMessage(eventType: string, sesMessageId: string) {
  return JSON.stringify({ eventType, mail: { messageId: sesMessageId, timestamp: new Date().toISOString(), headers: [] }, delivery: {} });
}

it('processes queued SES events into statuses and counters', async () => {
  const team = await db.team.create({ data: { name: 't' } });
  const id = newId();
  await db.email.create({
    data: { id, teamId: team.id, from: 'a@example.com', to: ['b@example.org'], subject: 's', sesEmailId: 'ses-1', latestStatus: 'SENT' },
  });
  const q = queues.get(queueNames.sesEvents);
  const jobs: SesEventJob[] = [
    { snsMessageId: newId(), topicArn: 'arn', message: sesMessage('Delivery', 'ses-1') },
    { snsMessageId: newId(), topicArn: 'arn', message: sesMessage('Open', 'ses-1') },
  ];
  for (const job of jobs) {
    const added = await q.add('e', job, { ...sesEventJobOptions, jobId: job.snsMessageId });
    expect(await added.waitUntilFinished(events, 15_000)).toBe('processed');
  }
  expect((await db.email.findUniqueOrThrow({ where: { id } })).latestStatus).toBe('OPENED');
  // The periodic fold (not started here) adds the events' counter deltas to the daily row.
  await foldCounterDeltas(prismaExecutor(db), 1000);
  const usage = await db.dailyEmailUsage.findMany({ where: { teamId: team.id } });
  expect(usage).toHaveLength(1);
  expect(usage[0]).toMatchObject({ delivered: 1, opened: 1, domainId: 0, type: 'TRANSACTIONAL' });
});

it('retries an event whose email is not known yet, and applies it once the email has its SES id', async () => {
  const team = await db.team.create({ data: { name: 't' } });
  const id = newId();
  await db.email.create({
    data: { id, teamId: team.id, from: 'a@example.com', to: ['b@example.org'], subject: 's', latestStatus: 'QUEUED' },
  });
  const job: SesEventJob = { snsMessageId: newId(), topicArn: 'arn', message: sesMessage('Delivery', 'ses-late') };
  const queue = queues.get(queueNames.sesEvents);
  // The retry waits until the test promotes it: the SES id is stored between the two attempts,
  // however long the first one took.
  const added = await queue.add('e', job, { attempts: 3, backoff: { type: 'fixed', delay: 3_600_000 }, jobId: job.snsMessageId });
  const retry = await waitFor(async () => ((await queue.getJobState(added.id!)) === 'delayed' ? queue.getJob(added.id!) : undefined), {
    timeoutMs: 15_000,
    what: 'the first attempt to fail',
  });
  expect(retry?.attemptsMade).toBe(1);
  // The send path stores the SES id after the event was queued.
  await db.email.update({ where: { id }, data: { sesEmailId: 'ses-late' } });
  await retry!.promote();
  expect(await added.waitUntilFinished(events, 15_000)).toBe('processed');
  expect((await db.email.findUniqueOrThrow({ where: { id } })).latestStatus).toBe('DELIVERED');
});
