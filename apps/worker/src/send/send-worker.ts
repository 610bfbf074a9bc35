import { setTimeout as sleep } from 'node:timers/promises';
import { DelayedError, Worker, type Job } from 'bullmq';
import { clearDeadJob } from '@mailrail/platform/queue/dead-jobs';
import { queueNames, queuePrefix, sendJobEmailIds, singleSendJob, type SendEmailJob, type SendLane } from '@mailrail/platform/queue/queues';
import { duplicateRedis } from '@mailrail/platform/redis/client';
import type { WorkerDeps } from '../deps';
import { createAcceptanceCommitter } from './acceptance-committer';
import { createClaimCommitter } from './claim-committer';
import { createSendRateLimiter, recipientCount, type SendRateLimiter } from './rate-limits';
import { sendOneEmail, type SendEmailDeps, type SendOutcome } from './send-email';
import { createSesCallSlots, type SesCallSlots } from './ses-call-slots';
import { SEND_RATE_LIMIT_WAIT, SES_NOT_CALLED } from './ses-errors';
import { claimRunningOut, LATE_FOR_SLOT, type RawEmailToSend, type SesSender } from './ses-sender';

// BullMQ glue around sendOneEmail: one worker per SES region and lane, paced by the Redis
// limiter that all replicas and both lanes of a region share (rate-limits.ts). The job only
// carries the email id; the database decides.

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
// (ses-call-slots.ts). BullMQ runs as many jobs per lane, so a lane of single-email jobs keeps as
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
  // not one round trip each (about 4 % of the worker's busy time was these writes and reads).
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
      const pacing: LanePacing = {
        limiter,
        region,
        lane,
        maxBookingWaitMs: leaseMs / 4,
        throttleRegion,
        // The pause is stored in Redis: every replica's worker of this lane waits, not only ours.
        pauseLane: (ms) => worker.rateLimit(ms),
        freeUntil: 0,
        sesCalls: createSesCallSlots(deps.config.SEND_CONCURRENCY),
        emails: createSesCallSlots(emailsInFlight),
        closing: () => closing,
      };
      const worker: Worker<SendEmailJob, SendOutcome | SendGroupResult> = new Worker<SendEmailJob, SendOutcome | SendGroupResult>(
        queueNames.send(region, lane),
        (job, token) => processSendJob(deps, sendDeps, job, token, pacing),
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

interface LanePacing {
  limiter: SendRateLimiter;
  region: string;
  lane: SendLane;
  /** Longest sleep for a claimed email's slot (peeks only pass within the horizon). */
  maxBookingWaitMs: number;
  throttleRegion: (ms: number) => Promise<unknown>;
  pauseLane: (ms: number) => Promise<void>;
  /**
   * Until when this process skips the look before the claim: set for a moment after a booking
   * that needed no wait (the limiter is not what holds the lane back), so a lane well under the
   * rate pays one Redis round trip per email, not two.
   */
  freeUntil: number;
  /** SEND_CONCURRENCY SES calls per lane, whatever the number of jobs running. */
  sesCalls: SesCallSlots;
  /** Emails in flight per lane (claim to acceptance), whatever the jobs carry: one or a group each. */
  emails: SesCallSlots;
  /** True once the workers are closing. */
  closing: () => boolean;
}

const FREE_LANE_MS = 250;
const LATE_FLOOR_MS = 10;

/** A group job's result, kept small (BullMQ stores it): how many of its emails ended how. */
export interface SendGroupResult {
  result: 'group';
  outcomes: Partial<Record<GroupMemberOutcome['result'], number>>;
}

/** A group's email not started because this worker is closing: it goes back to the queue alone, for any replica. */
type GroupMemberOutcome = SendOutcome | { result: 'handed-back' };

async function processSendJob(
  deps: WorkerDeps,
  sendDeps: SendEmailDeps,
  job: Job<SendEmailJob, SendOutcome | SendGroupResult>,
  token: string | undefined,
  pacing: LanePacing,
): Promise<SendOutcome | SendGroupResult> {
  const { limiter, region, lane } = pacing;
  // Room on the timeline? Asked before the claim, so a refusal costs no database write: the job
  // goes back to its queue (no attempt counted) and the lane pauses until the limiter has room.
  if (Date.now() >= pacing.freeUntil) {
    const room = await limiter.acquire(region, lane, 1, { peek: true });
    if (!room.granted) {
      deps.metrics.sendPermits.inc({ lane, result: 'refused' });
      await pacing.pauseLane(room.retryInMs);
      throw await backToTheFront(job);
    }
  }
  if ('emailIds' in job.data) return processSendGroup(deps, sendDeps, job.queueName, job.data.emailIds, pacing);
  const emailId = job.data.emailId;
  const sent = await sendInLane(deps, sendDeps, job.queueName, emailId, pacing);
  const outcome = sent.outcome;
  switch (outcome.result) {
    case 'sent':
    case 'failed':
    case 'skipped':
      return outcome;
    case 'throttled':
      // Back to the wait list without counting an attempt, once the lane or the region has slowed down.
      await slowDownFor(deps, pacing, job.queueName, sent);
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
 * throttled) leaves the group at once for a job of its own, under its own id as any single
 * email's job, and the group's other emails go on. At once, not when the group ends: at a low SES
 * rate a group's last email may start seconds after its first, and an email held back meanwhile
 * left SES idle at the end of a burst (fault scenario 9 measured 18.2/s of 20/s).
 */
async function processSendGroup(
  deps: WorkerDeps,
  sendDeps: SendEmailDeps,
  queueName: string,
  emailIds: string[],
  pacing: LanePacing,
): Promise<SendGroupResult> {
  const outcomes: SendGroupResult['outcomes'] = {};
  // One pause per kind for the group: its throttled emails met the same limit.
  const paused = new Set<boolean>();
  const sendOne = async (emailId: string) => {
    const sent = await sendGroupMember(deps, sendDeps, queueName, emailId, pacing);
    const outcome = sent.outcome;
    outcomes[outcome.result] = (outcomes[outcome.result] ?? 0) + 1;
    if (outcome.result === 'retry' || outcome.result === 'later') await sendAlone(deps, queueName, emailId, outcome.delayMs);
    if (outcome.result === 'handed-back') await sendAlone(deps, queueName, emailId, 0);
    if (outcome.result === 'throttled') {
      const first = !paused.has(sent.localWait);
      paused.add(sent.localWait);
      if (first) await slowDownFor(deps, pacing, queueName, sent);
      // Straight back to the wait list, as a single throttled job goes: the pause just set holds
      // the lane (or the region) for every replica. A delay of its own on top would be a second
      // guess of the same wait, and an email delayed past the pause leaves SES idle meanwhile.
      await sendAlone(deps, queueName, emailId, 0);
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
 * One email of a group job, once it has an email slot. Unlike a job of its own, it was not looked
 * at by the limiter before the job started: it looks now (unless the lane is known to be free),
 * so on a lane held back by the rate a refusal costs no claim, and the email waits in a delayed
 * job of its own. A worker that is closing hands the group's unstarted emails back instead of
 * sending them: a group holds up to SEND_GROUP_SIZE emails, which at a low SES rate would keep a
 * deploy waiting for seconds.
 */
async function sendGroupMember(
  deps: WorkerDeps,
  sendDeps: SendEmailDeps,
  queueName: string,
  emailId: string,
  pacing: LanePacing,
): Promise<LaneSend<GroupMemberOutcome>> {
  return sendInLane<GroupMemberOutcome>(deps, sendDeps, queueName, emailId, pacing, async () => {
    if (pacing.closing()) return { emailId, outcome: { result: 'handed-back' }, localWait: false, retryInMs: 0 };
    if (Date.now() < pacing.freeUntil) return undefined;
    const room = await pacing.limiter.acquire(pacing.region, pacing.lane, 1, { peek: true });
    if (room.granted) return undefined;
    deps.metrics.sendPermits.inc({ lane: pacing.lane, result: 'refused' });
    const failure = { kind: 'throttled' as const, name: SEND_RATE_LIMIT_WAIT, message: 'no send slot soon enough; not claimed' };
    return { emailId, outcome: { result: 'throttled', failure }, localWait: true, retryInMs: room.retryInMs };
  });
}

interface LaneSend<O = SendOutcome> {
  emailId: string;
  outcome: O;
  /** Throttled by our own limiter (no slot soon enough once claimed), not by SES. */
  localWait: boolean;
  /** For a local wait: when the limiter expects room. */
  retryInMs: number;
}

/**
 * One email through sendOneEmail, inside one of the lane's email slots, with its metrics and logs.
 * `before`, once the slot is taken, may answer instead of sending (the email is not claimed).
 */
async function sendInLane<O = SendOutcome>(
  deps: WorkerDeps,
  sendDeps: SendEmailDeps,
  queueName: string,
  emailId: string,
  pacing: LanePacing,
  before?: () => Promise<LaneSend<O> | undefined>,
): Promise<LaneSend<O | SendOutcome>> {
  const releaseSlot = await pacing.emails.take();
  let outcome: SendOutcome;
  const booking = { retryInMs: 0 };
  try {
    const instead = await before?.();
    if (instead) return instead;
    const ses = pacedSender(deps, pacing, booking);
    const timer = deps.metrics.jobDuration.startTimer({ queue: queueName });
    outcome = await sendOneEmail({ ...sendDeps, ses }, emailId);
    timer({ outcome: outcome.result });
  } finally {
    releaseSlot();
  }
  const localWait = 'failure' in outcome && outcome.failure.name === SEND_RATE_LIMIT_WAIT;
  if ('failure' in outcome && !localWait) deps.metrics.sesErrors.inc({ name: outcome.failure.name });
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
  return { emailId, outcome, localWait, retryInMs: booking.retryInMs };
}

/** A throttled email: pause the lane until our limiter has room, or the region after SES throttled. */
async function slowDownFor(deps: WorkerDeps, pacing: LanePacing, queueName: string, sent: LaneSend<GroupMemberOutcome>): Promise<void> {
  if (sent.localWait) {
    // No slot soon enough once the email was claimed (others booked first); the claim was given back.
    await pacing.pauseLane(sent.retryInMs);
    return;
  }
  deps.log.warn(
    { emailId: sent.emailId, error: 'failure' in sent.outcome ? sent.outcome.failure.name : undefined },
    'SES throttled; pausing the region',
  );
  deps.metrics.rateLimitWaits.inc({ queue: queueName, reason: 'ses-throttling' });
  await pacing.throttleRegion(deps.config.SES_THROTTLE_PAUSE_MS);
}

/** Bookings a message may be late for before its email goes back to its queue. */
const LATE_BOOKINGS = 3;

/**
 * The SES port as one job sees it: the permits are booked right before the call, once the email
 * is claimed, its MIME built and an SES call slot free, so the message leaves at its slot (a slot
 * booked earlier would be used late by a slow claim, and late permits bunch up at SES). A message
 * for n recipients books n permits, as SES counts recipients. A message that would leave well
 * after its slot (a busy event loop: woken late, or slow through the SDK's steps) books again
 * rather than reach SES almost together with the next slot's message; late three times, its email
 * waits in its queue. The SES call slot (SEND_CONCURRENCY per lane) is held from before the
 * booking until SES answered: the jobs waiting for a group claim or a group write hold none.
 */
function pacedSender(deps: WorkerDeps, pacing: LanePacing, booking: { retryInMs: number }): SesSender {
  const ses = deps.ses;
  const { limiter, region, lane } = pacing;
  // Late by half an interval, it would bunch up at SES with the next slot's message; but never
  // less than 10 ms: a message that late moves at most 1 % of a second's permits into the next
  // second, inside SES's tolerance, while waking a few ms late is common on a busy machine (at
  // 160/s, a 5 ms bound rebooked 7 % of the sends and lost their slots).
  const lateAfterMs = Math.max(limiter.intervalMs(region) / 2, LATE_FLOOR_MS);
  return {
    async sendRawEmail(email) {
      const releaseSlot = await pacing.sesCalls.take();
      try {
        return await pacedCall(email);
      } finally {
        releaseSlot();
      }
    },
    getMaxSendRate: (r) => ses.getMaxSendRate(r),
    close: () => ses.close(),
  };

  async function pacedCall(email: RawEmailToSend): Promise<{ messageId: string }> {
    const permits = recipientCount(email.destination);
    for (let tries = 1; tries <= LATE_BOOKINGS; tries++) {
      // A permit booked for a call that then may not start (its claim would run out first, see
      // RawEmailToSend.startBy) would be a slot of the SES rate lost: give the claim back before booking.
      if (email.startBy !== undefined && Date.now() + pacing.maxBookingWaitMs > email.startBy) throw claimRunningOut();
      const permit = await limiter.acquire(region, lane, permits, { maxWaitMs: pacing.maxBookingWaitMs }).catch((err: Error) => {
        // A Redis error here is not an SES call without an answer: it must not leave the email in doubt.
        throw Object.assign(new Error(`booking the send rate failed: ${err.message}`, { cause: err }), { name: SES_NOT_CALLED });
      });
      if (!permit.granted) {
        pacing.freeUntil = 0;
        deps.metrics.sendPermits.inc({ lane, result: 'refused' }, permits);
        booking.retryInMs = permit.retryInMs;
        throw Object.assign(new Error(`no send slot for ${permits} recipients within ${pacing.maxBookingWaitMs} ms`), {
          name: SEND_RATE_LIMIT_WAIT,
        });
      }
      deps.metrics.sendPermits.inc({ lane, result: 'granted' }, permits);
      pacing.freeUntil = permit.delayMs <= limiter.intervalMs(region) ? Date.now() + FREE_LANE_MS : 0;
      const sleepMs = permit.slotAt - Date.now();
      if (sleepMs >= 1) await sleep(sleepMs);
      // Late already when the answer arrived, woken late, or late by the time the SDK writes the
      // request (the sender checks leaveBy then): book again. Only a message that queued for its
      // slot at least that long is held to it: the timeline is then full around it, and a late
      // message would bunch up with the next slot's. One whose slot came sooner found the
      // timeline (nearly) free, so the rate is not what limits the lane: with the rate far above
      // what the process can send, holding every message to a slot a few µs away rebooked one in
      // four and sent one in fifteen back to its queue (bench/worker, 2 cores).
      const leaveBy = permit.queuedMs >= lateAfterMs ? permit.slotAt + lateAfterMs : undefined;
      if (leaveBy === undefined || Date.now() < leaveBy) {
        try {
          return await ses.sendRawEmail({ ...email, leaveBy });
        } catch (err) {
          if ((err as Error | undefined)?.name !== LATE_FOR_SLOT) throw err;
        }
      }
      deps.metrics.sendPermits.inc({ lane, result: 'late' }, permits);
    }
    // Late every time: this process is too busy to keep a slot. A late message would reach SES
    // with the next slot's (that bunching failed fault scenario 9), so the email waits in its queue
    // like a refused one (no attempt counted) and the lane pauses for a slot.
    booking.retryInMs = Math.ceil(limiter.intervalMs(region));
    throw Object.assign(new Error(`late for ${LATE_BOOKINGS} send slots in a row`), { name: SEND_RATE_LIMIT_WAIT });
  }
}
