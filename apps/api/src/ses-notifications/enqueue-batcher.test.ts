import type { Queue } from 'bullmq';
import { batchedEnqueue } from './enqueue-batcher';

// A recording stand-in for the queue: what is checked is how calls are grouped and how a
// failure reaches every caller (the real queue is exercised by ses-notifications.test.ts).
function fakeQueue(fail = false) {
  const batches: string[][] = [];
  const queue = {
    addBulk: async (jobs: { opts: { jobId: string } }[]) => {
      batches.push(jobs.map((j) => j.opts.jobId));
      if (fail) throw new Error('Connection is closed.');
      return [];
    },
  } as unknown as Queue;
  return { queue, batches };
}

it('sends jobs added in the same tick as one addBulk, in order, and splits large bursts', async () => {
  const { queue, batches } = fakeQueue();
  const enqueue = batchedEnqueue(queue, 3);
  await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => enqueue('e', {}, { jobId: id })));
  expect(batches).toEqual([
    ['a', 'b', 'c'],
    ['d', 'e'],
  ]);
  await enqueue('e', {}, { jobId: 'f' });
  expect(batches[2]).toEqual(['f']);
});

it('fails every caller of a batch Redis refused', async () => {
  const { queue } = fakeQueue(true);
  const enqueue = batchedEnqueue(queue);
  const results = await Promise.allSettled([enqueue('e', {}, { jobId: 'a' }), enqueue('e', {}, { jobId: 'b' })]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
});
