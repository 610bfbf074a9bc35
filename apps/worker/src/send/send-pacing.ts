import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import type { Logger } from '@mailrail/platform/log/logger';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import { queueNames, type SendLane } from '@mailrail/platform/queue/queues';
import { recipientCount, type SendRateLimiter } from './rate-limits';
import type { SesFailure } from './ses-errors';
import type { RawEmailToSend, SesSender, SesSendAnswer } from './ses-sender';

// How fast one lane of one region may send, behind one interface: ask before a claim, call SES
// through the lane, report how an email ended. Everything that paces (the shared Redis limiter,
// the lane's slots for emails and SES calls, sleeping until a booked slot, booking again when
// late, pausing the lane or the region) lives here; the worker only reads the outcomes.

/** What the lane's SES call answers: SES's answer, or why the call did not leave (SES errors are thrown as the SDK's). */
export type SesCallAnswer =
  | Exclude<SesSendAnswer, { reason: 'late-for-slot' }>
  /** The limiter had no slot soon enough, or the process was late for every slot it booked: the lane waits `retryInMs`. */
  | { sent: false; reason: 'no-slot'; retryInMs: number }
  /** The limiter could not be asked (its Redis is gone): SES was not called, the email is retried like a transient failure. */
  | { sent: false; reason: 'rate-unavailable'; message: string };

/** The SES call one email's send makes (send-email.ts). */
export type SesCall = (email: RawEmailToSend) => Promise<SesCallAnswer>;

/** The outcomes that slow a lane down. */
export type PacingOutcome =
  /** No send slot soon enough on our own limiter: nothing claimed, or the claim given back with its attempt. */
  | { result: 'paced'; retryInMs: number }
  /** SES throttled the call: the attempt was given back. */
  | { result: 'throttled'; failure: SesFailure };

export interface LanePacing {
  /**
   * Before a claim: is there room on the lane's timeline soon? A refusal costs no database write:
   * the caller reports it and puts the email back in its queue.
   */
  ask(): Promise<PacingOutcome | undefined>;
  /** Runs one email's send in one of the lane's email slots (claim to recorded outcome). */
  inEmailSlot<T>(send: () => Promise<T>): Promise<T>;
  /** The lane's SES call: an SES call slot, the message's permits, a sleep until its slot, then SES. */
  call: SesCall;
  /**
   * After a paced or throttled email: pauses the lane until the limiter expects room, or, after
   * SES throttled, both lanes of the region. The pauses live in Redis: every replica waits.
   */
  report(outcome: PacingOutcome, emailId: string): Promise<void>;
}

export interface LanePacingSettings {
  limiter: SendRateLimiter;
  region: string;
  lane: SendLane;
  ses: SesSender;
  /** Longest sleep for a claimed email's slot (asks before a claim only pass within the horizon). */
  maxBookingWaitMs: number;
  /** SES calls in flight in this lane (SEND_CONCURRENCY), whatever the number of jobs running. */
  sesCallsInFlight: number;
  /** Emails in flight in this lane, claim to acceptance, whatever the jobs carry: one or a group each. */
  emailsInFlight: number;
  pauseLane(ms: number): Promise<unknown>;
  pauseRegion(ms: number): Promise<unknown>;
  /** How long the region pauses after SES throttled (SES_THROTTLE_PAUSE_MS). */
  regionPauseMs: number;
  metrics: Pick<Metrics, 'sendPermits' | 'rateLimitWaits'>;
  log: Logger;
}

/** After a booking that needed no wait, asks before a claim are skipped this long. */
const FREE_LANE_MS = 250;
/** Never hold a message to its slot by less than this (see lateAfterMs). */
const LATE_FLOOR_MS = 10;
/** Bookings a message may be late for before its email goes back to its queue. */
const LATE_BOOKINGS = 3;

export function createLanePacing(s: LanePacingSettings): LanePacing {
  const { limiter, region, lane, metrics } = s;
  const sesCalls = pLimit(s.sesCallsInFlight);
  const emails = pLimit(s.emailsInFlight);
  const queue = queueNames.send(region, lane);
  // Until when the ask before a claim is skipped: set for a moment after a booking that needed no
  // wait (the limiter is not what holds the lane back), so a lane well under the rate pays one
  // Redis round trip per email, not two.
  let freeUntil = 0;
  // Late by half an interval, a message would reach SES with the next slot's; but never less than
  // LATE_FLOOR_MS: that late moves at most 1 % of a second's permits into the next second, inside
  // SES's tolerance, while waking a few ms late is common on a busy machine and rebooking for it
  // would lose slots.
  const lateAfterMs = Math.max(limiter.intervalMs(region) / 2, LATE_FLOOR_MS);

  /**
   * The permits are booked right before the call, once the email is claimed, its MIME built and an
   * SES call slot free, so the message leaves at its slot: a slot booked earlier would be used late
   * by a slow claim, and late permits bunch up at SES. A message for n recipients books n permits,
   * as SES counts recipients. A message that would leave well after its slot (woken late, or slow
   * through the SDK's steps) books again rather than reach SES almost together with the next
   * slot's message; late three times, this process is too busy to keep a slot, and the email waits
   * in its queue like a refused one.
   */
  async function pacedCall(email: RawEmailToSend): Promise<SesCallAnswer> {
    const permits = recipientCount(email.destination);
    for (let tries = 1; tries <= LATE_BOOKINGS; tries++) {
      // A permit booked for a call that then may not start would be a slot of the SES rate lost:
      // give the claim back before booking.
      if (email.startBy !== undefined && Date.now() + s.maxBookingWaitMs > email.startBy)
        return { sent: false, reason: 'claim-running-out' };
      let permit;
      try {
        permit = await limiter.acquire(region, lane, permits, { maxWaitMs: s.maxBookingWaitMs });
      } catch (err) {
        return { sent: false, reason: 'rate-unavailable', message: `booking the send rate failed: ${(err as Error).message}` };
      }
      if (!permit.granted) {
        freeUntil = 0;
        metrics.sendPermits.inc({ lane, result: 'refused' }, permits);
        return { sent: false, reason: 'no-slot', retryInMs: permit.retryInMs };
      }
      metrics.sendPermits.inc({ lane, result: 'granted' }, permits);
      freeUntil = permit.delayMs <= limiter.intervalMs(region) ? Date.now() + FREE_LANE_MS : 0;
      const sleepMs = permit.slotAt - Date.now();
      if (sleepMs >= 1) await sleep(sleepMs);
      // Only a message that queued for its slot at least lateAfterMs is held to it: the timeline is
      // then full around it, and a late message would bunch up with the next slot's. One whose slot
      // came sooner found the timeline (nearly) free, so the rate is not what limits the lane, and
      // holding it to a slot a few µs away would only rebook it. The sender checks leaveBy as the
      // request leaves, after the SDK's own steps.
      const leaveBy = permit.queuedMs >= lateAfterMs ? permit.slotAt + lateAfterMs : undefined;
      if (leaveBy === undefined || Date.now() < leaveBy) {
        const answer = await s.ses.sendRawEmail({ ...email, leaveBy });
        if (answer.sent || answer.reason !== 'late-for-slot') return answer;
      }
      metrics.sendPermits.inc({ lane, result: 'late' }, permits);
    }
    return { sent: false, reason: 'no-slot', retryInMs: Math.ceil(limiter.intervalMs(region)) };
  }

  return {
    async ask() {
      if (Date.now() < freeUntil) return undefined;
      const room = await limiter.acquire(region, lane, 1, { peek: true });
      if (room.granted) return undefined;
      metrics.sendPermits.inc({ lane, result: 'refused' });
      return { result: 'paced', retryInMs: room.retryInMs };
    },
    inEmailSlot: (send) => emails(send),
    // The SES call slot is held from before the booking until SES answered: the emails waiting
    // for a group claim or a group write hold none.
    call: (email) => sesCalls(() => pacedCall(email)),
    async report(outcome, emailId) {
      if (outcome.result === 'paced') {
        await s.pauseLane(outcome.retryInMs);
        return;
      }
      s.log.warn({ emailId, error: outcome.failure.name }, 'SES throttled; pausing the region');
      metrics.rateLimitWaits.inc({ queue, reason: 'ses-throttling' });
      await s.pauseRegion(s.regionPauseMs);
    },
  };
}

/** The SES call without pacing (one email sent outside the send workers, and the tests). */
export function sesCallNow(ses: SesSender): SesCall {
  return async (email) => {
    const answer = await ses.sendRawEmail(email);
    // Only a call given leaveBy can be late for its slot; this one has none.
    return answer.sent || answer.reason !== 'late-for-slot' ? answer : { sent: false, reason: 'no-slot', retryInMs: 0 };
  };
}
