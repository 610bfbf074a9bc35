import { clearDeadJob, isLiveJobState } from '@mailrail/platform/queue/dead-jobs';
import { isoUtcSql } from '@mailrail/platform/db/sql/time';
import { queueNames, singleSendJob } from '@mailrail/platform/queue/queues';
import type { WorkerDeps } from '../deps';

// PostgreSQL is the source of truth, Redis only carries work. This sweep finds every email that
// should have a live send job and makes sure it has one: emails that are due (or due within the
// look-ahead) and unsent, with no lease or an expired one (a worker died mid-send). Re-adding a
// job whose id (= email id) is waiting, delayed or active is a no-op in BullMQ; any other job of
// an email that is still unsent is removed and added again (clearDeadJob). So is an active job
// whose BullMQ lock is gone: its worker died, and waiting for BullMQ's stalled check instead
// would hold the email up to 30 s more (docs/worker.md, "A worker that crashed"). An email stored
// in a group (Email.sendJobId) is carried by its group's job while that job is live; once the
// group job is finished or abandoned, the email gets a job of its own.
// A backlog larger than one run's batch is looked at a page per run, from a cursor kept in Redis.
// Always starting from the oldest, the sweeper only ever saw the first SEND_SWEEP_BATCH unsent
// emails, so an email whose job Redis lost (a failover to a replica that had not received it yet)
// waited until the whole backlog ahead of it, a large campaign say, was sent. A lost cursor only
// starts the pass again from the oldest.

export interface SweepResult {
  checked: number;
  enqueued: number;
}

interface Candidate {
  id: string;
  region: string;
  isMarketing: boolean;
  delayMs: number;
  /** The group job that carries the email (Email.sendJobId), or null. */
  sendJobId: string | null;
  /**
   * Where the email sorts: COALESCE("scheduledAt", "createdAt") in ISO 8601, UTC, to the
   * millisecond (the columns' precision), which reads back the same whatever the session's
   * DateStyle and TimeZone.
   */
  sortAt: string;
}

/** The last email of the previous page: the next run starts after it. */
interface SweepCursor {
  sortAt: string;
  id: string;
}

const CURSOR_TTL_SECONDS = 3600;

/** The Redis key of the sweeper's cursor (one per deployment, whichever replica runs the sweep). */
export const sweepCursorKey = (prefix: string) => `${prefix}:sweep-unsent-emails:cursor`;

export async function sweepUnsentEmails(deps: Pick<WorkerDeps, 'sql' | 'queues' | 'log' | 'config' | 'redis'>): Promise<SweepResult> {
  const { config } = deps;
  const cursorKey = sweepCursorKey(config.REDIS_PREFIX);
  const cursor = parseCursor(await deps.redis.get(cursorKey));
  const candidates = await deps.sql.query<Candidate>(
    `SELECT e.id, COALESCE(d.region, $1) AS region, e."isMarketing", e."sendJobId",
            GREATEST(0, EXTRACT(EPOCH FROM (e."scheduledAt" - now())) * 1000)::float8 AS "delayMs",
            ${isoUtcSql('COALESCE(e."scheduledAt", e."createdAt")')} AS "sortAt"
       FROM "Email" e
       LEFT JOIN "Domain" d ON d.id = e."domainId"
      WHERE e."latestStatus" IN ('QUEUED', 'SCHEDULED')
        AND e."sesEmailId" IS NULL
        AND (e."sendLeaseUntil" IS NULL OR e."sendLeaseUntil" < now())
        AND (e."scheduledAt" IS NULL
             OR e."scheduledAt" <= now() + ($2::int * interval '1 second'))
        AND ($4::timestamptz IS NULL OR (COALESCE(e."scheduledAt", e."createdAt"), e.id) > ($4::timestamptz, $5::text))
      ORDER BY COALESCE(e."scheduledAt", e."createdAt"), e.id
      LIMIT $3::int`,
    [config.AWS_REGION, config.SEND_SWEEP_LOOKAHEAD_SECONDS, config.SEND_SWEEP_BATCH, cursor?.sortAt ?? null, cursor?.id ?? null],
  );
  // A full page: the next run goes on after it. A short one ended the pass: the next starts over.
  const last = candidates.length === config.SEND_SWEEP_BATCH ? candidates[candidates.length - 1] : undefined;
  if (last)
    await deps.redis.set(cursorKey, JSON.stringify({ sortAt: last.sortAt, id: last.id } satisfies SweepCursor), 'EX', CURSOR_TTL_SECONDS);
  else if (cursor) await deps.redis.del(cursorKey);

  const byQueue = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const name = queueNames.send(c.region, c.isMarketing ? 'marketing' : 'transactional');
    const list = byQueue.get(name);
    if (list) list.push(c);
    else byQueue.set(name, [c]);
  }

  let enqueued = 0;
  for (const [name, list] of byQueue) {
    const queue = deps.queues.get(name);
    // A group job still waiting (or running, its lock held) carries its emails; a finished or
    // abandoned one is removed, and its unsent emails get jobs of their own below. The group jobs
    // are read first: a group adds its leftover emails' own jobs before it ends, so an email read
    // afterwards without a live job of its own was not handed on by its group.
    const groupIds = [...new Set(list.flatMap((c) => (c.sendJobId ? [c.sendJobId] : [])))];
    const groupStates = new Map(await Promise.all(groupIds.map(async (id) => [id, await queue.getJobState(id)] as const)));
    // A group that has not started yet (waiting, delayed) will try every one of its emails and has
    // handed none on: its emails need no look at jobs of their own. During a backlog that is nearly
    // every candidate, and a state read each was most of a sweep's work (2,000 reads every 30 s).
    const unchecked = list.filter((c) => !(c.sendJobId && isWaitingGroup(groupStates.get(c.sendJobId))));
    const states = await Promise.all(unchecked.map((c) => queue.getJobState(c.id)));
    const orphaned = [...new Set(unchecked.flatMap((c, i) => (c.sendJobId && !isLiveJobState(states[i]) ? [c.sendJobId] : [])))];
    const groupGone = new Map(
      await Promise.all(
        orphaned.map(async (id) => [id, await clearDeadJob(queue, id, groupStates.get(id), { unlockedActive: true })] as const),
      ),
    );
    const missing: Candidate[] = [];
    await Promise.all(
      unchecked.map(async (c, i) => {
        if (c.sendJobId && groupGone.get(c.sendJobId) === false) return;
        if (await clearDeadJob(queue, c.id, states[i], { unlockedActive: true })) missing.push(c);
      }),
    );
    if (missing.length === 0) continue;
    await queue.addBulk(missing.map((c) => singleSendJob(c.id, c.delayMs)));
    enqueued += missing.length;
  }
  if (enqueued > 0) deps.log.warn({ enqueued, checked: candidates.length }, 'sweeper re-enqueued emails without a live job');
  return { checked: candidates.length, enqueued };
}

/** Live and not running: its emails are all still ahead of it (an email leaves its group only while the group runs). */
const isWaitingGroup = (state: string | undefined) => state !== undefined && state !== 'active' && isLiveJobState(state);

function parseCursor(text: string | null): SweepCursor | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Partial<SweepCursor>;
    return typeof value.sortAt === 'string' && !Number.isNaN(Date.parse(value.sortAt)) && typeof value.id === 'string'
      ? { sortAt: value.sortAt, id: value.id }
      : null;
  } catch {
    return null; // not ours: start the pass over
  }
}
