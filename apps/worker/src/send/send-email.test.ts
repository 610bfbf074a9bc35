import { simpleParser, type AddressObject } from 'mailparser';
import { useTestWorkerEnv } from '../testing/worker-harness';
import { AFTER_LEASE_MS, claimEmailForSending, configurationSetFor, retryDelayMs, sendOneEmail } from './send-email';

// sendOneEmail called directly (no BullMQ worker runs in this file): the claim, the outcomes and
// what the database says afterwards. SES is the fake SES HTTP endpoint, reached by the real SDK.

const env = useTestWorkerEnv();

const sentTo = (address: string) => env.ses.messagesTo(address).length;

describe('sendOneEmail', () => {
  it('sends a queued email once and records SENT with the SES message id', async () => {
    const [id] = await env.createEmails([{ to: ['once@example.net'] }]);
    const first = await sendOneEmail(env.deps, id);
    expect(first.result).toBe('sent');
    const row = await env.email(id);
    expect(row.latestStatus).toBe('SENT');
    expect(row.sesEmailId).toBe(env.ses.messages[0].messageId);
    expect(row.sentAt).toBeInstanceOf(Date);
    expect(row.sendLeaseUntil).toBeNull();
    expect(row.sendAttempts).toBe(1);
    expect(await env.events(id)).toEqual([
      { status: 'QUEUED', data: null },
      { status: 'SENT', data: { messageId: row.sesEmailId } },
    ]);

    // The same job run again finds the email sent and does nothing.
    expect(await sendOneEmail(env.deps, id)).toEqual({ result: 'skipped', status: 'SENT' });
    expect(sentTo('once@example.net')).toBe(1);
    expect((await env.events(id)).length).toBe(2);
  });

  it('keeps display names in the MIME headers (RFC 2047 when not ASCII) and gives SES bare addresses', async () => {
    const [id] = await env.createEmails([
      {
        from: 'Acme, Inc. <hello@example.com>',
        to: ['Ada Lovelace <ada@example.net>', 'plain@example.net'],
        cc: ['Zoë Ünicode <zoe@example.net>'],
        bcc: ['"Hidden, Person" <hidden@example.net>'],
        replyTo: ['"Support \\"24/7\\"" <help@example.com>'],
      },
    ]);
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    const [message] = env.ses.messages;
    expect(message.destination).toEqual({
      to: ['ada@example.net', 'plain@example.net'],
      cc: ['zoe@example.net'],
      bcc: ['hidden@example.net'],
    });
    expect(message.raw).toContain('=?UTF-8?Q?Zo=C3=AB_=C3=9Cnicode?=');
    expect(message.raw).not.toMatch(/^Bcc:/im);
    const parsed = await simpleParser(message.raw);
    const list = (a: AddressObject | AddressObject[] | undefined) =>
      (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => ({ name: v.name, address: v.address })));
    expect(list(parsed.from)).toEqual([{ name: 'Acme, Inc.', address: 'hello@example.com' }]);
    expect(list(parsed.to)).toEqual([
      { name: 'Ada Lovelace', address: 'ada@example.net' },
      { name: '', address: 'plain@example.net' },
    ]);
    expect(list(parsed.cc)).toEqual([{ name: 'Zoë Ünicode', address: 'zoe@example.net' }]);
    expect(list(parsed.replyTo)).toEqual([{ name: 'Support "24/7"', address: 'help@example.com' }]);
  });

  it("sends an SMTP client's own message as written: our id header first, Bcc and our headers out, its envelope as Destination", async () => {
    const lines = (...l: string[]) => l.join('\r\n');
    const headers = lines(
      'From: Ann <ann@example.com>',
      'To: Tom <to@example.net>',
      'Subject: Raw',
      'X-Custom: kept,',
      '  folded',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
    );
    const body = lines('', 'Bcc: a body line, not a header', 'Zoë', '');
    const raw = Buffer.from(
      lines(
        headers.split('\r\n')[0],
        'Bcc: hidden@example.net',
        'X-Usesend-Email-ID: forged',
        'X-Mailrail-Idempotency-Key: k1',
        ...headers.split('\r\n').slice(1),
      ) +
        '\r\n' +
        body,
    );
    const [id] = await env.createEmails([{ to: ['to@example.net'], bcc: ['hidden@example.net', 'blind@example.net'], rawMessage: raw }]);
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    const [message] = env.ses.messages;
    expect(message.raw).toBe(`X-Usesend-Email-ID: ${id}\r\n${headers}\r\n${body}`);
    expect(message.destination).toEqual({ to: ['to@example.net'], cc: [], bcc: ['hidden@example.net', 'blind@example.net'] });
    expect((await env.email(id)).rawMessage).toBeNull();
  });

  it('lets exactly one of two workers claiming at the same moment send', async () => {
    const replica = env.replica();
    env.ses.latencyMs = 300; // both calls overlap while the first one is at SES
    const ids = await env.createEmails(Array.from({ length: 10 }, (_, i) => ({ to: [`race${i}@example.net`] })));
    const outcomes = await Promise.all(ids.flatMap((id) => [sendOneEmail(env.deps, id), sendOneEmail(replica, id)]));
    const results = outcomes.map((o) => o.result);
    expect(results.filter((r) => r === 'sent')).toHaveLength(10);
    expect(results.filter((r) => r === 'later')).toHaveLength(10);
    for (let i = 0; i < 10; i++) expect(sentTo(`race${i}@example.net`)).toBe(1);
    for (const id of ids) expect((await env.events(id)).filter((e) => e.status === 'SENT')).toHaveLength(1);
  });

  it('waits for a live lease and takes over an expired one', async () => {
    const [id] = await env.createEmails([{ to: ['crashed@example.net'] }]);
    // A worker claimed it for a minute and died before calling SES.
    expect(
      await claimEmailForSending(env.deps.sql, id, { leaseSeconds: 60, inDoubtWaitSeconds: { marketing: 0, transactional: 0 } }),
    ).not.toBeNull();
    const leaseEnd = (await env.email(id)).sendLeaseUntil!.getTime();
    const before = Date.now();
    const blocked = await sendOneEmail(env.deps, id);
    const after = Date.now();
    expect(blocked).toMatchObject({ result: 'later', reason: 'leased' });
    // It comes back just after the lease, counted from when it looked (some time between before and after).
    const { delayMs } = blocked as { delayMs: number };
    expect(delayMs).toBeGreaterThanOrEqual(leaseEnd - after + AFTER_LEASE_MS);
    expect(delayMs).toBeLessThanOrEqual(leaseEnd - before + AFTER_LEASE_MS);
    // The lease ends: the test moves it into the past rather than waiting for it.
    await env.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: new Date(Date.now() - 1000) } });
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    expect(sentTo('crashed@example.net')).toBe(1);
    expect((await env.email(id)).sendAttempts).toBe(2);
  });

  it('does not send an email before its time', async () => {
    const dueAt = Date.now() + 60_000;
    const [id] = await env.createEmails([{ to: ['later@example.net'], scheduledAt: new Date(dueAt) }]);
    const before = Date.now();
    const outcome = await sendOneEmail(env.deps, id);
    const after = Date.now();
    expect(outcome).toMatchObject({ result: 'later', reason: 'not-due' });
    // It comes back at its time, counted from when it looked.
    const { delayMs } = outcome as { delayMs: number };
    expect(delayMs).toBeGreaterThanOrEqual(dueAt - after);
    expect(delayMs).toBeLessThanOrEqual(dueAt - before);
    expect(env.ses.sendCalls).toBe(0);
    expect((await env.email(id)).latestStatus).toBe('SCHEDULED');
  });

  it.each(['CANCELLED', 'SUPPRESSED', 'FAILED'] as const)('never sends a %s email', async (status) => {
    const [id] = await env.createEmails([{ to: [`${status}@example.net`] }]);
    await env.deps.db.email.update({ where: { id }, data: { latestStatus: status } });
    expect(await sendOneEmail(env.deps, id)).toEqual({ result: 'skipped', status });
    expect(env.ses.sendCalls).toBe(0);
  });

  it('fails a rejected email at once with the SES error name and message', async () => {
    const [id] = await env.createEmails([{ to: ['rejected@example.net'] }]);
    env.ses.failNext(1, { kind: 'reject', message: 'Email address is not verified.' });
    const outcome = await sendOneEmail(env.deps, id);
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'permanent', name: 'MessageRejected' } });
    const row = await env.email(id);
    expect(row.latestStatus).toBe('FAILED');
    expect(row.sesEmailId).toBeNull();
    expect(row.sendLeaseUntil).toBeNull();
    expect((await env.events(id)).at(-1)).toEqual({
      status: 'FAILED',
      data: { error: 'MessageRejected', message: 'Email address is not verified.' },
    });
  });

  it.each([
    ['MailFromDomainNotVerifiedException', 400],
    ['AccountSuspendedException', 400],
    ['NotFoundException', 404],
  ])('treats %s as permanent', async (name, status) => {
    const [id] = await env.createEmails([{ to: [`${name}@example.net`] }]);
    env.ses.failNext(1, { kind: 'reject', name, status });
    expect(await sendOneEmail(env.deps, id)).toMatchObject({ result: 'failed', failure: { name } });
    expect((await env.email(id)).latestStatus).toBe('FAILED');
  });

  it('gives throttled attempts back and releases the lease', async () => {
    const [id] = await env.createEmails([{ to: ['throttled@example.net'] }]);
    env.ses.failNext(1, { kind: 'throttle' });
    expect(await sendOneEmail(env.deps, id)).toMatchObject({ result: 'throttled', failure: { name: 'ThrottlingException' } });
    let row = await env.email(id);
    expect(row).toMatchObject({ latestStatus: 'QUEUED', sendAttempts: 0, sendLeaseUntil: null });
    env.ses.failNext(1, { kind: 'tooManyRequests' });
    expect(await sendOneEmail(env.deps, id)).toMatchObject({ result: 'throttled', failure: { name: 'TooManyRequestsException' } });
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    row = await env.email(id);
    expect(row.sendAttempts).toBe(1);
    expect(sentTo('throttled@example.net')).toBe(1);
  });

  it('gives the attempt back to an email its lane paced, and retries one whose limiter could not be asked, never in doubt', async () => {
    const [id] = await env.createEmails([{ to: ['paced@example.net'] }]);
    const paced = { ...env.deps, sesCall: async () => ({ sent: false, reason: 'no-slot', retryInMs: 300 }) as const };
    expect(await sendOneEmail(paced, id)).toEqual({ result: 'paced', retryInMs: 300 });
    expect(await env.email(id)).toMatchObject({ latestStatus: 'QUEUED', sendAttempts: 0, sendLeaseUntil: null, sesCallStartedAt: null });
    const message = 'booking the send rate failed: Connection is closed.';
    const unreachable = { ...env.deps, sesCall: async () => ({ sent: false, reason: 'rate-unavailable', message }) as const };
    expect(await sendOneEmail(unreachable, id)).toMatchObject({
      result: 'retry',
      failure: { kind: 'transient', name: 'SendRateUnavailable', message },
    });
    expect(await env.email(id)).toMatchObject({ latestStatus: 'QUEUED', sendAttempts: 1, sendLeaseUntil: null, sesCallStartedAt: null });
    expect((await sendOneEmail(env.deps, id)).result).toBe('sent');
    expect(sentTo('paced@example.net')).toBe(1);
  });

  it('retries 5xx and timeouts with backoff, then fails when the attempts are spent', async () => {
    const deps = { ...env.deps, send: { ...env.deps.send, maxAttempts: 3 } };
    const [id] = await env.createEmails([{ to: ['flaky@example.net'] }]);
    env.ses.failNext(1, { kind: 'serverError', status: 503, name: 'ServiceUnavailable' });
    env.ses.failNext(1, { kind: 'timeout', delayMs: 2500 }); // beyond SES_TIMEOUT_MS=1000
    const first = await sendOneEmail(deps, id);
    expect(first).toMatchObject({ result: 'retry', failure: { kind: 'transient', name: 'ServiceUnavailable' } });
    expect((await env.email(id)).sendLeaseUntil).toBeNull();
    const second = await sendOneEmail(deps, id);
    expect(second).toMatchObject({ result: 'retry', failure: { kind: 'transient', name: 'TimeoutError' } });
    expect((second as { delayMs: number }).delayMs).toBeGreaterThan((first as { delayMs: number }).delayMs * 1.2);
    env.ses.failNext(1, { kind: 'serverError' });
    expect(await sendOneEmail(deps, id)).toMatchObject({ result: 'failed', failure: { name: 'InternalFailure' } });
    expect((await env.events(id)).at(-1)).toEqual({
      status: 'FAILED',
      data: { error: 'InternalFailure', message: 'Internal failure.', attempts: 3 },
    });
    expect(env.ses.messages).toHaveLength(0);
  });
});

describe('retryDelayMs', () => {
  const s = { retryBaseMs: 10_000, retryMaxMs: 900_000 };
  it('doubles per attempt with at most 20% jitter and a cap', () => {
    expect(retryDelayMs(1, s, () => 0.5)).toBe(10_000);
    expect(retryDelayMs(4, s, () => 0.5)).toBe(80_000);
    expect(retryDelayMs(20, s, () => 0.5)).toBe(900_000);
    expect(retryDelayMs(1, s, () => 0)).toBe(8_000);
    expect(retryDelayMs(1, s, () => 1)).toBe(12_000);
  });
  it('spans about an hour with the default 10 attempts', () => {
    const total = Array.from({ length: 9 }, (_, i) => retryDelayMs(i + 1, s, () => 0.5)).reduce((a, b) => a + b, 0);
    expect(total / 60_000).toBeGreaterThan(45);
    expect(total / 60_000).toBeLessThan(75);
  });
});

describe('configurationSetFor', () => {
  it('picks the set from the tracking flags, none without a prefix', () => {
    expect(configurationSetFor(undefined, { clickTracking: true, openTracking: true })).toBeUndefined();
    expect(configurationSetFor('mr', { clickTracking: false, openTracking: false })).toBe('mr-general');
    expect(configurationSetFor('mr', { clickTracking: true, openTracking: false })).toBe('mr-click');
    expect(configurationSetFor('mr', { clickTracking: false, openTracking: true })).toBe('mr-open');
    expect(configurationSetFor('mr', { clickTracking: true, openTracking: true })).toBe('mr-full');
  });
});
