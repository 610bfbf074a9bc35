import { setTimeout as sleep } from 'node:timers/promises';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { recordSesAcceptance } from '@mailrail/domain/sql/ses-acceptance';
import { sesSendEvent, startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import type { WorkerDeps } from '../deps';
import { AFTER_LEASE_MS, sendOneEmail } from './send-email';

// A worker that dies between SES accepting a message and recording it leaves the email "in doubt".
// Campaign mail waits for SES's Send event (which carries our email id header) before sending
// again; transactional mail is sent again when the lease ends (both configurable). sendOneEmail is
// called directly; the "death" is an SES port that hands the message to the fake SES and then
// never answers, so the worker never records anything, exactly as after a SIGKILL.

const LEASE = 5; // SEND_LEASE_SECONDS of the worker harness
const WAIT = 120; // SES_IN_DOUBT_WAIT_SECONDS here: long, so only an arrived Send event can end it early

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv({ SES_IN_DOUBT_WAIT_SECONDS: String(WAIT) });
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => env.ses.reset());

/** The worker's deps with an SES port that delivers to SES and then hangs, like a process killed mid-call. */
function dyingWorker(deps: WorkerDeps): WorkerDeps {
  return {
    ...deps,
    ses: {
      ...deps.ses,
      sendRawEmail: async (email) => {
        await deps.ses.sendRawEmail(email);
        return new Promise<never>(() => undefined);
      },
    },
  };
}

/** Claims and calls SES, then "dies": resolves once SES has the message. */
async function sendAndDie(deps: WorkerDeps, id: string): Promise<string> {
  const before = env.ses.messages.length;
  void sendOneEmail(dyingWorker(deps), id);
  const message = await env.waitFor(async () => env.ses.messages.slice(before).find((m) => m.raw.includes(id)));
  return message.messageId;
}

/** Moves the email's claim `seconds` into the past, as if that much time had gone by. */
async function timePasses(id: string, seconds: number): Promise<void> {
  await env.deps.sql.execute(
    `UPDATE "Email" SET "sendLeaseUntil" = "sendLeaseUntil" - ($2::int * interval '1 second'),
                        "sesCallStartedAt" = "sesCallStartedAt" - ($2::int * interval '1 second') WHERE id = $1`,
    [id, seconds],
  );
}

const sentEvents = async (id: string) => (await env.events(id)).filter((e) => e.status === 'SENT');

describe('campaign mail in doubt (SES_IN_DOUBT_CAMPAIGN=wait, the default)', () => {
  it('is not sent again when the Send event arrives after the lease expired: SENT with its message id', async () => {
    const [id] = await env.createEmails([{ lane: 'marketing', to: ['doubt-1@example.net'] }]);
    const messageId = await sendAndDie(env.deps, id);
    expect((await env.email(id)).sesCallStartedAt).toBeInstanceOf(Date);

    await timePasses(id, LEASE + 1);
    // The lease is over but the in-doubt wait is not: another worker looks again once the claim
    // (lease plus wait) has ended, counted from when it looked.
    const claimEnd = (await env.email(id)).sendLeaseUntil!.getTime();
    const before = Date.now();
    const later = await sendOneEmail(env.deps, id);
    const after = Date.now();
    expect(later).toMatchObject({ result: 'later', reason: 'leased' });
    const { delayMs } = later as { delayMs: number };
    expect(delayMs).toBeGreaterThanOrEqual(claimEnd - after + AFTER_LEASE_MS);
    expect(delayMs).toBeLessThanOrEqual(claimEnd - before + AFTER_LEASE_MS);

    expect(await processSesEventJob({ db: env.deps.db }, sesSendEvent(id, messageId))).toBe('processed');
    const row = await env.email(id);
    expect(row).toMatchObject({ latestStatus: 'SENT', sesEmailId: messageId, sendLeaseUntil: null, sesCallStartedAt: null });
    expect(row.sentAt).toBeInstanceOf(Date);

    // Even once the wait is over, nothing is sent again.
    await timePasses(id, WAIT + 1);
    expect(await sendOneEmail(env.deps, id)).toEqual({ result: 'skipped', status: 'SENT' });
    expect(env.ses.messagesTo('doubt-1@example.net')).toHaveLength(1);
    expect(await sentEvents(id)).toEqual([{ status: 'SENT', data: { messageId } }]);
  });

  it('is sent again, once, when no Send event came within the wait', async () => {
    const [id] = await env.createEmails([{ lane: 'marketing', to: ['doubt-2@example.net'] }]);
    await sendAndDie(env.deps, id);

    await timePasses(id, LEASE + 1);
    expect(await sendOneEmail(env.deps, id)).toMatchObject({ result: 'later' });
    expect(env.ses.messagesTo('doubt-2@example.net')).toHaveLength(1);

    await timePasses(id, WAIT);
    const resent = await sendOneEmail(env.deps, id);
    expect(resent.result).toBe('sent');
    expect(await sendOneEmail(env.deps, id)).toEqual({ result: 'skipped', status: 'SENT' });
    const copies = env.ses.messagesTo('doubt-2@example.net');
    expect(copies).toHaveLength(2);
    const row = await env.email(id);
    expect(row).toMatchObject({ latestStatus: 'SENT', sesEmailId: copies[1].messageId, sesCallStartedAt: null });
    expect(await sentEvents(id)).toHaveLength(1);
  });

  it('records a Send event that overtakes the worker once, and the worker adds no second SENT event', async () => {
    const [id] = await env.createEmails([{ lane: 'marketing', to: ['overtaken@example.net'] }]);
    // SES's answer is slow to reach the worker: its Send event is processed first.
    const slowAnswer: WorkerDeps = {
      ...env.deps,
      ses: {
        ...env.deps.ses,
        sendRawEmail: async (email) => {
          const answer = await env.deps.ses.sendRawEmail(email);
          if (answer.sent) await processSesEventJob({ db: env.deps.db }, sesSendEvent(id, answer.messageId));
          return answer;
        },
      },
    };
    const outcome = await sendOneEmail(slowAnswer, id);
    expect(outcome.result).toBe('sent');
    const messageId = env.ses.messagesTo('overtaken@example.net')[0].messageId;
    expect(await env.email(id)).toMatchObject({ latestStatus: 'SENT', sesEmailId: messageId, sendLeaseUntil: null });
    expect(await sentEvents(id)).toEqual([{ status: 'SENT', data: { messageId } }]);
  });

  it('gets one SENT event when the worker and the Send event record the acceptance at the same moment', async () => {
    const ids = await env.createEmails(
      Array.from({ length: 60 }, (_, i) => ({ lane: 'marketing' as const, to: [`race-${i}@example.net`] })),
    );
    // The worker's write starts 0 to 20 ms after the event's transaction: every interleaving, the
    // worker's statement waiting on the event's row lock included.
    await Promise.all(
      ids.map(async (id, i) => {
        const messageId = `ses-race-${i}`;
        await Promise.all([
          processSesEventJob({ db: env.deps.db }, sesSendEvent(id, messageId)),
          sleep(i % 21).then(() => recordSesAcceptance(env.deps.sql, id, messageId)),
        ]);
      }),
    );
    for (const [i, id] of ids.entries()) {
      expect(await env.email(id)).toMatchObject({ latestStatus: 'SENT', sesEmailId: `ses-race-${i}` });
      expect(await sentEvents(id)).toHaveLength(1);
    }
  });
});

describe('transactional mail in doubt', () => {
  it('is sent again as soon as the lease expired, by default (at least once)', async () => {
    const [id] = await env.createEmails([{ to: ['tx-doubt@example.net'] }]);
    await sendAndDie(env.deps, id);
    await timePasses(id, LEASE + 1);
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    expect(env.ses.messagesTo('tx-doubt@example.net')).toHaveLength(2);
    expect(await sentEvents(id)).toHaveLength(1);
  });

  it('waits for the Send event with SES_IN_DOUBT_TRANSACTIONAL=wait, and campaign mail resends with SES_IN_DOUBT_CAMPAIGN=resend', async () => {
    const swapped = env.replica({
      SES_IN_DOUBT_WAIT_SECONDS: String(WAIT),
      SES_IN_DOUBT_TRANSACTIONAL: 'wait',
      SES_IN_DOUBT_CAMPAIGN: 'resend',
    });
    const [tx, campaign] = await env.createEmails([
      { to: ['tx-wait@example.net'] },
      { lane: 'marketing', to: ['campaign-resend@example.net'] },
    ]);
    await sendAndDie(swapped, tx);
    await sendAndDie(swapped, campaign);
    await timePasses(tx, LEASE + 1);
    await timePasses(campaign, LEASE + 1);
    expect(await sendOneEmail(swapped, tx)).toMatchObject({ result: 'later' });
    expect((await sendOneEmail(swapped, campaign)).result).toBe('sent');
    expect(env.ses.messagesTo('tx-wait@example.net')).toHaveLength(1);
    expect(env.ses.messagesTo('campaign-resend@example.net')).toHaveLength(2);
  });
});

// An SES call that gets no answer (the client's timeout, a connection cut mid-call) may have
// reached SES: for a lane that waits, that is the same doubt as a worker dying mid-call.
describe('an SES call that got no answer', () => {
  it('leaves campaign mail in doubt, claimed with its call marker, until the Send event records it: one copy', async () => {
    const [id] = await env.createEmails([{ lane: 'marketing', to: ['timeout-campaign@example.net'] }]);
    env.ses.failNext(1, { kind: 'timeout', delayMs: 3000, accept: true }); // the harness's SES_TIMEOUT_MS is 1000
    const outcome = await sendOneEmail(env.deps, id);
    expect(outcome).toMatchObject({ result: 'later', reason: 'in-doubt' });
    // It looks again once the claim, lease plus in-doubt wait, has ended.
    expect(outcome).toMatchObject({ delayMs: (LEASE + WAIT) * 1000 + AFTER_LEASE_MS });
    const row = await env.email(id);
    expect(row).toMatchObject({ latestStatus: 'QUEUED', sesEmailId: null });
    expect(row.sesCallStartedAt).toBeInstanceOf(Date);
    expect(row.sendLeaseUntil!.getTime() - row.sesCallStartedAt!.getTime()).toBe((LEASE + WAIT) * 1000);

    // Another worker (the sweeper's job) finds it held; the Send event records it.
    expect(await sendOneEmail(env.deps, id)).toMatchObject({ result: 'later', reason: 'leased' });
    const [copy] = env.ses.messagesTo('timeout-campaign@example.net');
    expect(await processSesEventJob({ db: env.deps.db }, sesSendEvent(id, copy.messageId))).toBe('processed');
    await timePasses(id, LEASE + WAIT + 1);
    expect(await sendOneEmail(env.deps, id)).toEqual({ result: 'skipped', status: 'SENT' });
    expect(env.ses.messagesTo('timeout-campaign@example.net')).toHaveLength(1);
  });

  it('is sent again after the wait when SES never had it', async () => {
    const [id] = await env.createEmails([{ lane: 'marketing', to: ['timeout-lost@example.net'] }]);
    env.ses.failNext(1, { kind: 'timeout', delayMs: 3000, accept: false });
    expect(await sendOneEmail(env.deps, id)).toMatchObject({ result: 'later', reason: 'in-doubt' });
    await timePasses(id, LEASE + WAIT + 1);
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    expect(env.ses.messagesTo('timeout-lost@example.net')).toHaveLength(1);
  });

  it('retries transactional mail at once (SES_IN_DOUBT_TRANSACTIONAL=resend, the default): at least once', async () => {
    const [id] = await env.createEmails([{ to: ['timeout-tx@example.net'] }]);
    env.ses.failNext(1, { kind: 'timeout', delayMs: 3000, accept: false });
    expect(await sendOneEmail(env.deps, id)).toMatchObject({ result: 'retry' });
    expect(await env.email(id)).toMatchObject({ sendLeaseUntil: null, sesCallStartedAt: null });
  });
});

// A send waits for its SES call slot and rate permit after the claim; a process stalled longer
// than the claim lasts must not call SES, since another worker may have claimed the email since.
describe('a claim that runs out before the SES call starts', () => {
  /** The worker's deps with an SES port that stalls `ms` before the call, as a busy process would. */
  const stalling = (deps: WorkerDeps, ms: number, duringStall?: () => Promise<void>): WorkerDeps => ({
    ...deps,
    ses: {
      ...deps.ses,
      sendRawEmail: async (email) => {
        await sleep(ms);
        await duringStall?.();
        return deps.ses.sendRawEmail(email);
      },
    },
  });
  // Lease 5 s, SES timeout 1 s, 1 s to record: the call must start within 3 s of the claim.
  const PAST_START_BY_MS = 3300;

  it('does not call SES and hands the email back (attempt given back): the next claim sends it once', async () => {
    const [id] = await env.createEmails([{ to: ['stalled@example.net'] }]);
    expect(await sendOneEmail(stalling(env.deps, PAST_START_BY_MS), id)).toEqual({ result: 'later', delayMs: 0, reason: 'claim-ran-out' });
    expect(env.ses.messagesTo('stalled@example.net')).toHaveLength(0);
    expect(await env.email(id)).toMatchObject({ latestStatus: 'QUEUED', sendLeaseUntil: null, sesCallStartedAt: null, sendAttempts: 0 });
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    expect(env.ses.messagesTo('stalled@example.net')).toHaveLength(1);
  });

  it('leaves alone a later claim of another worker', async () => {
    const [id] = await env.createEmails([{ to: ['taken-over@example.net'] }]);
    // While this worker stalls, another claims the email (its claim counts the next attempt).
    const otherClaims = async () => {
      await env.deps.sql.execute(
        `UPDATE "Email" SET "sendAttempts" = "sendAttempts" + 1, "sendLeaseUntil" = now() + interval '60 seconds', "sesCallStartedAt" = now() WHERE id = $1`,
        [id],
      );
    };
    expect(await sendOneEmail(stalling(env.deps, PAST_START_BY_MS, otherClaims), id)).toMatchObject({ reason: 'claim-ran-out' });
    const row = await env.email(id);
    expect(row.sendAttempts).toBe(2);
    expect(row.sendLeaseUntil!.getTime() - row.sesCallStartedAt!.getTime()).toBe(60_000);
    expect(row.sesCallStartedAt).toBeInstanceOf(Date);
    expect(env.ses.messagesTo('taken-over@example.net')).toHaveLength(0);
  });
});
