import { DelayedError, Worker, type Job } from 'bullmq';
import { clearDeadJob } from '@mailrail/platform/queue/dead-jobs';
import { queueNames, queuePrefix, sendJobEmailIds, singleSendJob, type SendEmailJob, type SendLane } from '@mailrail/platform/queue/queues';
import { duplicateRedis } from '@mailrail/platform/redis/client';
import type { WorkerDeps } from '../deps';
import { createAcceptanceCommitter } from './acceptance-committer';
import { createClaimCommitter } from './claim-committer';
import { createSendRateLimiter } from './rate-limits';
import { sendOneEmail, type SendEmailDeps, type SendOutcome } from './send-email';
import { createLanePacing, type LanePacing } from './send-pacing';

// BullMQ glue around sendOneEmail: one worker per SES region and lane, paced by its LanePacing
// (send-pacing.ts: the Redis limiter that all replicas and both lanes of a region share, and the
// lane's slots). The job only carries the email ids; the database decides.

// BullMQ honours a manual rateLimit() only on a worker that has a limiter; this one never limits
// by itself (the shared limiter does), it only lets a refused lane pause.
const MANUAL_PAUSES_ONLY = { max: 1_000_000_000, duration: 1000 };

export const SEND_LANES: SendLane[] = ['transactional', 'marketing'];

export interface SendWorkers {
  workers: Worker<SendEmailJob, SendOutcome | SendGroupResult>[];
  /** Stops taking jobs, waits for the sends in flight. */
  close(): Promise<void>;
}

// Claims and acceptances are written in groups (claim-committer.ts, acceptance-committer.ts): a
// few milliseconds more per email buy one statement for all the jobs that start (or whose sends
// finish) meanwhile.
const CLAIM_WINDOW_MS = 10;
const ACCEPTANCE_WINDOW_MS = 10;
const ACCEPTANCE_MAX_BATCH = 100;
// Emails in flight per SES call in flight: an email waiting for its claim's group or its
// acceptance's group holds no SES call slot; SES calls stay at SEND_CONCURRENCY per lane
// (send-pacing.ts). BullMQ runs as many jobs per lane, so a lane of single-email jobs keeps as
// many emails in flight as one of group jobs (whose extra jobs wait for email slots).
const EMAILS_PER_SES_CALL = 3;

export function startSendWorkers(deps: WorkerDeps, ratesByRegion: Map<string, number>): SendWorkers {
  const workers: Worker<SendEmailJob, SendOutcome | SendGroupResult>[] = [];
  const acceptances = createAcceptanceCommitter(deps.sql, { windowMs: ACCEPTANCE_WINDOW_MS, maxBatch: ACCEPTANCE_MAX_BATCH });
  // A claim group as large as a lane's emails in flight: all of them may start within one window.
  const emailsInFlight = deps.config.SEND_CONCURRENCY * EMAILS_PER_SES_CALL;
  const claims = createClaimCommitter(deps.sql, deps.send, { windowMs: CLAIM_WINDOW_MS, maxBatch: emailsInFlight });
  const sendDeps: SendEmailDeps = { ...deps, acceptances, claims };
  let closing = false;
  const leaseMs = deps.config.SEND_LEASE_SECONDS * 1000;
  const stalledAfterMs = Math.min(30_000, Math.max(5_000, leaseMs / 2));
  // The limiter sends the bookings of all the jobs whose SES calls start in one turn of the event
  // loop as one script call per region (rate-limits.ts); its own connection also pipelines
  // automatically, so the calls of several regions leave in one write and come back in one read,
  // not one round trip each.
  const limiterRedis = duplicateRedis(deps.redis, { enableAutoPipelining: true });
  // A job sleeps until its slot while holding the email's lease: keep the sleeps well inside it.
  const limiter = createSendRateLimiter(limiterRedis, {
    prefix: deps.config.REDIS_PREFIX,
    ratesByRegion,
    marketingShare: deps.config.SES_MARKETING_SHARE,
    maxHorizonMs: leaseMs / 4,
  });
  for (const region of deps.config.sesRegions) {
    const regionWorkers: Worker[] = [];
    // SES throttles per region, whatever the lane: slow both lanes of the region down.
    const throttleRegion = (ms: number) => Promise.all(regionWorkers.map((w) => w.rateLimit(ms)));
    for (const lane of SEND_LANES) {
      const pacing = createLanePacing({
        limiter,
        region,
        lane,
        ses: deps.ses,
        maxBookingWaitMs: leaseMs / 4,
        sesCallsInFlight: deps.config.SEND_CONCURRENCY,
        emailsInFlight,
        // The pause is stored in Redis: every replica's worker of this lane waits, not only ours.
        pauseLane: (ms) => worker.rateLimit(ms),
        pauseRegion: throttleRegion,
        regionPauseMs: deps.config.SES_THROTTLE_PAUSE_MS,
        metrics: deps.metrics,
        log: deps.log,
      });
      const laneContext: LaneContext = { pacing, sendDeps: { ...sendDeps, sesCall: pacing.call }, closing: () => closing };
      const worker: Worker<SendEmailJob, SendOutcome | SendGroupResult> = new Worker<SendEmailJob, SendOutcome | SendGroupResult>(
        queueNames.send(region, lane),
        (job, token) => processSendJob(deps, laneContext, job, token),
        {
          connection: deps.redis,
          prefix: queuePrefix(deps.config, queueNames.send(region, lane)),
          concurrency: emailsInFlight,
          limiter: MANUAL_PAUSES_ONLY,
          // A job whose worker died (SIGKILL) goes back to the queue once its lock expires and
          // the stalled check runs; keep both short so recovery takes about a lease, not minutes.
          lockDuration: stalledAfterMs,
          stalledInterval: stalledAfterMs,
        },
      );
      worker.on('error', (err) => deps.log.error({ err, region, lane }, 'send worker error'));
      worker.on('failed', (job, err) =>
        deps.log.error({ err, emailIds: job ? sendJobEmailIds(job.data) : undefined, region, lane }, 'send job failed'),
      );
      regionWorkers.push(worker);
      workers.push(worker);
    }
    deps.log.info({ region, rate: ratesByRegion.get(region), horizonMs: limiter.horizonMs }, 'send workers started');
  }
  return {
    workers,
    close: async () => {
      closing = true;
      await Promise.all(workers.map((w) => w.close()));
      await claims.flush();
      await acceptances.flush();
      limiterRedis.disconnect();
    },
  };
}

/** One lane's worker: its pacing, and what sendOneEmail needs with the lane's paced SES call. */
interface LaneContext {
  pacing: LanePacing;
  sendDeps: SendEmailDeps;
  /** True once the workers are closing. */
  closing: () => boolean;
}

/** A group job's result, kept small (BullMQ stores it): how many of its emails ended how. */
export interface SendGroupResult {
  result: 'group';
  outcomes: Partial<Record<GroupMemberOutcome['result'], number>>;
}

/** A group's email not started because this worker is closing: it goes back to the queue alone, for any replica. */
type GroupMemberOutcome = SendOutcome | { result: 'handed-back' };

async function processSendJob(
  deps: WorkerDeps,
  lane: LaneContext,
  job: Job<SendEmailJob, SendOutcome | SendGroupResult>,
  token: string | undefined,
): Promise<SendOutcome | SendGroupResult> {
  // Room on the timeline? Asked before the claim, so a refusal costs no database write: the job
  // goes back to its queue (no attempt counted) and the lane pauses until the limiter has room.
  const refused = await lane.pacing.ask();
  if (refused) {
    await lane.pacing.report(refused, sendJobEmailIds(job.data)[0]);
    throw await backToTheFront(job);
  }
  if ('emailIds' in job.data) return processSendGroup(deps, lane, job.queueName, job.data.emailIds);
  const emailId = job.data.emailId;
  const outcome = await lane.pacing.inEmailSlot(() => sendCounted(deps, lane, job.queueName, emailId));
  switch (outcome.result) {
    case 'sent':
    case 'failed':
    case 'skipped':
      return outcome;
    case 'paced':
    case 'throttled':
      // Back to the wait list without counting an attempt, once the lane or the region has slowed down.
      await lane.pacing.report(outcome, emailId);
      throw await backToTheFront(job);
    case 'retry':
    case 'later':
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
  }
}

/**
 * The error that sends a job refused by the rate back to the queue without counting an attempt,
 * once its priority is dropped: it had its turn, so it goes to the wait list, which BullMQ serves
 * before its prioritized jobs (fair-priority.ts). Also because BullMQ puts a prioritized job back
 * without waking the workers: a worker that had drained its queue slept until its drainDelay (5 s).
 */
async function backToTheFront(job: Job<SendEmailJob, SendOutcome | SendGroupResult>): Promise<Error> {
  if (job.opts.priority) await job.changePriority({ priority: 0 });
  return Worker.RateLimitError();
}

/**
 * The emails of a group job, side by side: each takes one of the lane's email slots, so a lane
 * has as many emails in flight whatever the jobs carry. An email that must wait (retry, later,
 * paced, throttled) leaves the group at once for a job of its own, under its own id as any single
 * email's job, and the group's other emails go on. At once, not when the group ends: at a low SES
 * rate a group's last email may start seconds after its first, and an email held back meanwhile
 * would leave SES idle at the end of a burst.
 */
async function processSendGroup(deps: WorkerDeps, lane: LaneContext, queueName: string, emailIds: string[]): Promise<SendGroupResult> {
  const outcomes: SendGroupResult['outcomes'] = {};
  // One report per kind for the group: its paced or throttled emails met the same limit.
  const reported = new Set<string>();
  const sendOne = async (emailId: string) => {
    const outcome = await lane.pacing.inEmailSlot(() => sendGroupMember(deps, lane, queueName, emailId));
    outcomes[outcome.result] = (outcomes[outcome.result] ?? 0) + 1;
    switch (outcome.result) {
      case 'retry':
      case 'later':
        await sendAlone(deps, queueName, emailId, outcome.delayMs);
        break;
      case 'handed-back':
        await sendAlone(deps, queueName, emailId, 0);
        break;
      case 'paced':
      case 'throttled':
        if (!reported.has(outcome.result)) {
          reported.add(outcome.result);
          await lane.pacing.report(outcome, emailId);
        }
        // Straight back to the wait list, as a single job goes: the pause just set holds the lane
        // (or the region) for every replica. A delay of its own on top would be a second guess of
        // the same wait, and an email delayed past the pause leaves SES idle meanwhile.
        await sendAlone(deps, queueName, emailId, 0);
        break;
      default:
        break;
    }
  };
  // Every email's send ends before the job does, even when one of them throws (a database error):
  // the others' outcomes are handled, and the failed job leaves the thrower to the sweeper.
  const settled = await Promise.allSettled(emailIds.map(sendOne));
  const thrown = settled.find((r) => r.status === 'rejected');
  if (thrown) throw (thrown as PromiseRejectedResult).reason;
  return { result: 'group', outcomes };
}

/** A job of its own for an email that left its group, unless a live job of its own already covers it. */
async function sendAlone(deps: WorkerDeps, queueName: string, emailId: string, delayMs: number): Promise<void> {
  const queue = deps.queues.get(queueName);
  const job = singleSendJob(emailId, delayMs);
  if (await clearDeadJob(queue, emailId)) await queue.add(job.name, job.data, job.opts);
}

/**
 * One email of a group job, in its email slot. Unlike a job of its own, it was not asked about
 * before the job started: it asks now, so on a lane held back by the rate a refusal costs no
 * claim, and the email waits in a job of its own. A worker that is closing hands the group's
 * unstarted emails back instead of sending them: a group holds up to SEND_GROUP_SIZE emails, which
 * at a low SES rate would keep a deploy waiting for seconds.
 */
async function sendGroupMember(deps: WorkerDeps, lane: LaneContext, queueName: string, emailId: string): Promise<GroupMemberOutcome> {
  if (lane.closing()) return { result: 'handed-back' };
  const refused = await lane.pacing.ask();
  return refused ?? sendCounted(deps, lane, queueName, emailId);
}

/** One email through sendOneEmail with the lane's paced SES call, with its metrics and logs. */
async function sendCounted(deps: WorkerDeps, lane: LaneContext, queueName: string, emailId: string): Promise<SendOutcome> {
  const timer = deps.metrics.jobDuration.startTimer({ queue: queueName });
  const outcome = await sendOneEmail(lane.sendDeps, emailId);
  timer({ outcome: outcome.result });
  // Failed, retried and throttled sends carry SES's failure (a paced one never called SES).
  if ('failure' in outcome) deps.metrics.sesErrors.inc({ name: outcome.failure.name });
  const log = deps.log;
  switch (outcome.result) {
    case 'sent':
      deps.metrics.emailsByStatus.inc({ status: 'SENT' });
      break;
    case 'failed':
      deps.metrics.emailsByStatus.inc({ status: 'FAILED' });
      log.warn({ emailId, error: outcome.failure }, 'email failed');
      break;
    case 'skipped':
      log.debug({ emailId, status: outcome.status }, 'nothing to send');
      break;
    case 'retry':
      log.warn({ emailId, error: outcome.failure, delayMs: outcome.delayMs }, 'SES call failed; retrying');
      break;
    default:
      break;
  }
  return outcome;
}
