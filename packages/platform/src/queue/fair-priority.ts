import type { JobsOptions } from 'bullmq';
import type { Redis } from '../redis/client';

// Fairness across teams on a shared queue. Open-source BullMQ takes a queue's jobs first in, first
// out (per-group round-robin is a BullMQ Pro feature), so one team's burst of 100,000 emails used
// to hold back every other team's mail for as long as it took to send them. Priorities interleave
// the teams instead: the emails of a team that fall due in one minute take that team's places
// 1, 2, 3, ... in that minute, and a job's priority is its first email's place. A team with one
// email due gets place 1 and starts after at most one job of each other team, however long their
// queues; two busy teams alternate. Within a team, jobs keep the order they were added in.
//
// Places are counted in Redis per queue, minute and team, shared by every API replica, the SMTP
// relay and the campaign worker, and forgotten a minute after their minute ends: nothing has to
// be given back when a job ends, so a lost job or a crash cannot leave a team's count wrong for
// longer than that. A job added without a priority (one that left its group, the sweeper's
// re-adds) goes ahead of all prioritized ones: it has been waiting for its turn already.

/** The length of a counting window: a team's places restart at 1 in each. */
export const FAIR_WINDOW_MS = 60_000;
/** BullMQ's largest priority (2^21 - 1): a team past it shares the last place. */
const LAST_PLACE = 2 ** 21 - 1;

export interface PlainJob<T> {
  name: string;
  data: T;
  opts: JobsOptions & { jobId: string; delay?: number };
}

/** A job to add and whose share it takes: its team, and how many emails it carries. */
export interface FairJob<T> {
  job: PlainJob<T>;
  teamId: number;
  emails: number;
}

/**
 * The jobs, in the order given, each with the priority of its team's next free place in the
 * minute it falls due (now plus its delay). One round trip to Redis for the whole list; `keyOf`
 * names a minute's counts (the queue's own key prefix, so on a Redis Cluster they share its slot).
 */
export async function withFairPriorities<T>(
  redis: Redis,
  keyOf: (window: number) => string,
  jobs: FairJob<T>[],
  nowMs: number,
): Promise<PlainJob<T>[]> {
  const shares = new Map<string, { window: number; teamId: number; emails: number; next: number }>();
  const shareOf = (j: FairJob<T>) => {
    const window = Math.floor((nowMs + Math.max(0, j.job.opts.delay ?? 0)) / FAIR_WINDOW_MS);
    const key = `${window}:${j.teamId}`;
    let share = shares.get(key);
    if (!share) shares.set(key, (share = { window, teamId: j.teamId, emails: 0, next: 0 }));
    return share;
  };
  const jobShares = jobs.map(shareOf);
  jobs.forEach((j, i) => (jobShares[i].emails += j.emails));
  if (shares.size === 0) return [];
  const pipeline = redis.pipeline();
  for (const s of shares.values()) {
    const key = keyOf(s.window);
    pipeline.hincrby(key, String(s.teamId), s.emails);
    // Relative to the caller's clock, so a test clock's time cannot make the counts expire at once.
    pipeline.pexpire(key, (s.window + 2) * FAIR_WINDOW_MS - nowMs);
  }
  const replies = (await pipeline.exec()) ?? [];
  [...shares.values()].forEach((s, i) => {
    const [err, total] = replies[2 * i] ?? [new Error('no reply')];
    if (err) throw err;
    s.next = Number(total) - s.emails + 1;
  });
  return jobs.map((j, i) => {
    const share = jobShares[i];
    const priority = Math.min(LAST_PLACE, share.next);
    share.next += j.emails;
    return { ...j.job, opts: { ...j.job.opts, priority } };
  });
}
