import { maxInAnyWindow } from '@mailrail/testing/rate-windows';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

// The per-region rate limit through the whole send path in one worker process: both lanes with a
// backlog, at 20 messages per second. The limiter's own rules (spacing, horizon, shares) are
// tested against a clock the test moves (apps/worker/src/send/rate-limits.test.ts); this is what
// SES sees, so it is read from arrival times, with the tolerances the rules give (README.md):
// - permits lie one interval (50 ms) apart, and a message leaves at its slot or, held to it,
//   less than an interval late (send-pacing.ts, lateAfterMs), else it books again: no one-second
//   window of releases holds more than the rate plus one;
// - the fake SES shares this process's event loop: a request that left before a stall is stamped
//   when the stall ends, with the one after it: one more at SES (fault scenario 9 reads the rate at
//   a fake SES of its own process);
// - campaign mail may have booked up to one horizon (1 s: RATE permits) before transactional mail
//   first waits; from then on it gets at most its share (0.5) of the permits.
// How fast the whole backlog goes is not asserted: that is this machine's speed (bench/worker).

const RATE = 20;
const SHARE = 0.5;
const HORIZON_PERMITS = RATE; // the default horizon at this rate: 1 s

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv({ SES_RATE_LIMIT: String(RATE), SEND_CONCURRENCY: '20', SES_MARKETING_SHARE: String(SHARE) });
});
afterAll(async () => {
  await env?.close();
});

it('never exceeds the rate at SES, gives transactional mail at least its part, and counts no attempt for a wait', async () => {
  // When the worker hands each message to the SES client, after the limiter let it go; a message
  // the client gives back unsent (it would leave late for its slot, and is booked again) is not counted.
  const released: { to: string; at: number; recipients: number }[] = [];
  const ses = env.deps.ses;
  const send = ses.sendRawEmail.bind(ses);
  ses.sendRawEmail = (email) => {
    const recipients = email.destination.to.length + email.destination.cc.length + email.destination.bcc.length;
    const entry = { to: email.destination.to[0], at: Date.now(), recipients };
    released.push(entry);
    return send(email).then((answer) => {
      if (!answer.sent && answer.reason === 'late-for-slot') released.splice(released.indexOf(entry), 1);
      return answer;
    });
  };
  // A warm worker first (its first SES calls open sockets and load the SDK's credential chain).
  await env.start();
  const warm = await env.createEmails([{ to: ['warm1@example.net'] }, { to: ['warm2@example.net'], lane: 'marketing' }]);
  await env.waitFor(async () => env.ses.messages.length >= warm.length, 30_000);
  // SES counts recipients: a few transactional emails have three (To, Cc, Bcc).
  const tx = await env.createEmails(
    Array.from({ length: 60 }, (_, i) => ({
      to: [`tx${i}@example.net`],
      ...(i % 10 === 0 ? { cc: [`cc${i}@example.net`], bcc: [`bcc${i}@example.net`] } : {}),
    })),
  );
  const mk = await env.createEmails(Array.from({ length: 100 }, (_, i) => ({ to: [`mk${i}@example.net`], lane: 'marketing' as const })));
  const total = warm.length + tx.length + mk.length;
  expect(total).toBe(2 + 60 + 100);
  await env.waitFor(async () => env.ses.messages.length >= total, 60_000);
  await env.waitFor(async () => (await env.deps.db.email.count({ where: { latestStatus: 'SENT' } })) === total, 30_000);

  const atSes = (prefix: string) => env.ses.messages.filter((m) => m.destination.to[0].startsWith(prefix)).map((m) => m.at);
  const backlog = released.filter((r) => !r.to.startsWith('warm'));
  // Where the limiter acts: no one-second window above the rate by more than one message.
  expect(maxInAnyWindow(backlog.map((r) => r.at))).toBeLessThanOrEqual(RATE + 1);
  // SES's view: one more for the shared event loop.
  expect(maxInAnyWindow([...atSes('tx'), ...atSes('mk')])).toBeLessThanOrEqual(RATE + 2);
  // Every recipient took a permit (more when a job woke up late and booked again).
  const granted = (await env.deps.metrics.sendPermits.get()).values.filter((v) => v.labels.result === 'granted');
  expect(granted.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThanOrEqual(released.reduce((sum, r) => sum + r.recipients, 0));
  expect(released.reduce((sum, r) => sum + r.recipients, 0)).toBe(total + 2 * 6);

  // Campaign mail outlasts transactional mail; while transactional mail had a backlog (its first
  // release to its last), campaign mail took no more than its share of the permits, plus what it
  // may have booked before transactional mail first waited. Counted in release order, not timed.
  expect(Math.max(...atSes('mk'))).toBeGreaterThan(Math.max(...atSes('tx')));
  const inOrder = [...backlog].sort((x, y) => x.at - y.at);
  const firstTx = inOrder.findIndex((r) => r.to.startsWith('tx'));
  const lastTx = inOrder.length - 1 - [...inOrder].reverse().findIndex((r) => r.to.startsWith('tx'));
  const span = inOrder.slice(firstTx, lastTx + 1);
  const permitsOf = (prefix: string) => span.filter((r) => r.to.startsWith(prefix)).reduce((sum, r) => sum + r.recipients, 0);
  expect(permitsOf('mk')).toBeLessThanOrEqual((permitsOf('tx') * SHARE) / (1 - SHARE) + HORIZON_PERMITS);

  // More jobs than the horizon holds were refused and went back to their queue: no attempt was
  // used (one claim each), nothing failed.
  const refused = (await env.deps.metrics.sendPermits.get()).values.filter((v) => v.labels.result === 'refused');
  expect(refused.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThan(0);
  const attempts = await env.deps.db.email.groupBy({ by: ['sendAttempts'], _count: true });
  expect(attempts).toEqual([{ sendAttempts: 1, _count: total }]);
});
