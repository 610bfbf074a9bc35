import { simpleParser, type AddressObject } from 'mailparser';
import { queueNames, sendGroupJobId } from '@mailrail/platform/queue/queues';
import { jobIsSettled } from '@mailrail/testing/queue-state';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';

// The running worker end to end: emails stored and enqueued the way the API does it, BullMQ
// workers, the real SES SDK over HTTP to the fake SES, and the raw MIME parsed back with mailparser.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv({ SES_CONFIGURATION_SET_PREFIX: 'mr' });
  await env.deps.db.domain.update({ where: { id: env.domain.id }, data: { clickTracking: true, openTracking: true } });
  await env.start();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => env.ses.reset());

const waitForStatus = (id: string, status: string) =>
  env.waitFor(async () => {
    const row = await env.email(id);
    return row.latestStatus === status ? row : null;
  });
const addresses = (a: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => v.address));

it('puts every field of the email into the raw message', async () => {
  const [original] = await env.createEmails([{ to: ['thread@example.net'] }]);
  const first = await waitForStatus(original, 'SENT');

  const pdf = Buffer.from('%PDF-1.4 fake pdf \u00ff bytes');
  const [id] = await env.createEmails([
    {
      from: 'Ünïcode Sender <hello@example.com>',
      to: ['a@example.net', 'b@example.net'],
      cc: ['c@example.net'],
      bcc: ['hidden@example.net'],
      replyTo: ['reply@example.net'],
      subject: 'Grüße from the worker ✓',
      text: 'Plain body ✓',
      html: '<p>HTML body <b>✓</b></p>',
      attachments: [
        { filename: 'notes.txt', content: Buffer.from('attached text').toString('base64') },
        { filename: 'doc.pdf', content: pdf.toString('base64') },
      ],
      headers: {
        'X-Campaign': 'spring',
        'X-Usesend-Email-ID': 'forged',
        'X-Evil': 'a\r\nBcc: leak@example.net',
        Subject: 'overridden subject',
      },
      inReplyToId: original,
      unsubUrl: 'https://mail.example.com/unsubscribe?id=1&hash=abc',
    },
  ]);
  const row = await waitForStatus(id, 'SENT');
  const [msg, ...others] = env.ses.messagesTo('a@example.net');
  expect(others).toHaveLength(0);
  expect(msg.messageId).toBe(row.sesEmailId);
  expect(msg.configurationSetName).toBe('mr-full');
  expect(msg.region).toBe(env.domain.region);
  // bcc travels in the envelope only.
  expect(msg.destination).toEqual({ to: ['a@example.net', 'b@example.net'], cc: ['c@example.net'], bcc: ['hidden@example.net'] });
  expect(msg.raw).not.toContain('hidden@example.net');
  expect(msg.raw).not.toMatch(/^bcc:/im);

  const parsed = await simpleParser(msg.raw);
  expect(parsed.from?.value[0]).toEqual({ name: 'Ünïcode Sender', address: 'hello@example.com' });
  expect(addresses(parsed.to)).toEqual(['a@example.net', 'b@example.net']);
  expect(addresses(parsed.cc)).toEqual(['c@example.net']);
  expect(addresses(parsed.replyTo)).toEqual(['reply@example.net']);
  expect(parsed.subject).toBe('Grüße from the worker ✓');
  expect(parsed.text?.trim()).toBe('Plain body ✓');
  expect(parsed.html).toContain('<p>HTML body <b>✓</b></p>');
  expect(parsed.attachments.map((a) => [a.filename, a.content.toString('base64')])).toEqual([
    ['notes.txt', Buffer.from('attached text').toString('base64')],
    ['doc.pdf', pdf.toString('base64')],
  ]);
  expect(parsed.attachments[1].contentType).toBe('application/pdf');
  const h = parsed.headers;
  expect(h.get('x-usesend-email-id')).toBe(id);
  expect(h.get('x-campaign')).toBe('spring');
  expect(h.has('x-evil')).toBe(false);
  expect(h.get('in-reply-to')).toBe(`<${first.sesEmailId}@email.amazonses.com>`);
  expect(h.get('references')).toBe(`<${first.sesEmailId}@email.amazonses.com>`);
  expect(msg.raw).toMatch(/^List-Unsubscribe: <https:\/\/mail\.example\.com\/unsubscribe\?id=1&hash=abc>$/m);
  expect(msg.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
  expect(msg.raw).toMatch(/^Precedence: bulk$/m);

  // Once SES has the message, the payload that was only needed to build it is dropped.
  expect(row.attachments).toBeNull();
  expect(row.headers).toBeNull();
  expect(await env.events(id)).toEqual([
    { status: 'QUEUED', data: null },
    { status: 'SENT', data: { messageId: row.sesEmailId } },
  ]);
});

it('leaves the bulk headers out of transactional mail', async () => {
  const [id] = await env.createEmails([{ to: ['plain@example.net'], headers: { 'List-Unsubscribe': '<mailto:u@example.com>' } }]);
  await waitForStatus(id, 'SENT');
  const raw = env.ses.messages[0].raw;
  expect(raw).not.toMatch(/^Precedence:/im);
  expect(raw).not.toMatch(/^List-Unsubscribe-Post:/im);
  // A custom header may set what the defaults would otherwise set.
  expect(raw).toMatch(/^List-Unsubscribe: <mailto:u@example\.com>$/m);
  expect(raw).not.toMatch(/^In-Reply-To:/im);
});

it('retries throttled mail and sends it exactly once', async () => {
  env.ses.failNext(3, { kind: 'throttle', status: 429 });
  const [id] = await env.createEmails([{ to: ['throttled@example.net'] }]);
  const row = await waitForStatus(id, 'SENT');
  expect(env.ses.sendCalls).toBe(4);
  expect(env.ses.messagesTo('throttled@example.net')).toHaveLength(1);
  expect(row.sendAttempts).toBe(1);
});

it('retries 5xx answers and timeouts, then sends once', async () => {
  env.ses.failNext(1, { kind: 'serverError', status: 503, name: 'ServiceUnavailable' });
  env.ses.failNext(1, { kind: 'timeout', delayMs: 2000 });
  const [id] = await env.createEmails([{ to: ['flaky@example.net'] }]);
  const row = await waitForStatus(id, 'SENT');
  expect(env.ses.messagesTo('flaky@example.net')).toHaveLength(1);
  expect(row.sendAttempts).toBe(3);
});

it('sends the emails of a group job side by side; one that must be retried leaves for a job of its own', async () => {
  const queue = env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  env.ses.failNext(1, { kind: 'serverError', status: 503, name: 'ServiceUnavailable' });
  const ids = await env.createEmails(Array.from({ length: 4 }, (_, i) => ({ to: [`group-${i}@example.net`] })));
  const groupId = (await env.email(ids[0])).sendJobId!;
  expect(groupId).toBe(sendGroupJobId(ids[0]));
  const rows = await Promise.all(ids.map((id) => waitForStatus(id, 'SENT')));
  ids.forEach((_, i) => expect(env.ses.messagesTo(`group-${i}@example.net`)).toHaveLength(1));
  // The one whose first SES call failed was sent by a job of its own, on its second attempt.
  const retried = rows.filter((r) => r.sendAttempts === 2);
  expect(retried).toHaveLength(1);
  expect(rows.filter((r) => r.sendAttempts === 1)).toHaveLength(3);
  await env.waitFor(async () => (await queue.getJobState(retried[0].id)) === 'completed');
  expect((await queue.getJob(retried[0].id))?.data).toEqual({ emailId: retried[0].id });
  await env.waitFor(async () => (await queue.getJobState(groupId)) === 'completed');
  expect((await queue.getJob(groupId))?.returnvalue).toEqual({ result: 'group', outcomes: { sent: 3, retry: 1 } });
});

it('marks rejected mail FAILED with the reason and does not retry it', async () => {
  env.ses.failNext(1, { kind: 'reject', message: 'Email address is not verified. hello@example.com' });
  const [id] = await env.createEmails([{ to: ['rejected@example.net'] }]);
  await waitForStatus(id, 'FAILED');
  expect((await env.events(id)).at(-1)).toEqual({
    status: 'FAILED',
    data: { error: 'MessageRejected', message: 'Email address is not verified. hello@example.com' },
  });
  // Its job is over (a retry would keep it delayed, then fail it for good only after more calls).
  await env.waitFor(() => jobIsSettled(env.deps.queues.get(queueNames.send(env.domain.region, 'transactional')), id));
  expect(env.ses.sendCalls).toBe(1);
});

it('sends once when the same job runs twice', async () => {
  const [id] = await env.createEmails([{ to: ['twice@example.net'] }]);
  await waitForStatus(id, 'SENT');
  const queue = env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  await env.waitFor(async () => (await queue.getJobState(id)) === 'completed');
  await queue.remove(id);
  await queue.add('send', { emailId: id }, { jobId: id });
  await env.waitFor(async () => (await queue.getJobState(id)) === 'completed');
  const job = await queue.getJob(id);
  expect(job?.returnvalue).toEqual({ result: 'skipped', status: 'SENT' });
  expect(env.ses.messagesTo('twice@example.net')).toHaveLength(1);
});

it('sends a mixed load through both lanes exactly once per email', async () => {
  // A second copy is allowed for one reason only: an SES call that timed out after SES took the
  // message (the answer came too late, as on a loaded machine), which is retried like any timeout
  // (docs/worker.md, "The limits"). Any other copy fails: two claims, a takeover of a live job.
  const sesCalls = jest.spyOn(env.deps.ses, 'sendRawEmail');
  try {
    env.ses.failWithProbability(0.2, { kind: 'throttle' });
    const tx = await env.createEmails(Array.from({ length: 30 }, (_, i) => ({ to: [`tx${i}@example.net`] })));
    const mk = await env.createEmails(Array.from({ length: 30 }, (_, i) => ({ to: [`mk${i}@example.net`], lane: 'marketing' as const })));
    await env.waitFor(
      async () => (await env.deps.db.email.count({ where: { id: { in: [...tx, ...mk] }, latestStatus: 'SENT' } })) === 60,
      30_000,
    );
    const outcomes = await Promise.allSettled(sesCalls.mock.results.map((r) => r.value as Promise<{ messageId: string }>));
    const answered = new Set(outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.messageId] : [])));
    const timedOut = sesCalls.mock.calls
      .filter((_, i) => outcomes[i].status === 'rejected' && (outcomes[i] as PromiseRejectedResult).reason?.name === 'TimeoutError')
      .map(([email]) => email.destination.to[0]);

    const recipients = env.ses.messages.map((m) => m.destination.to[0]);
    const expected = [
      ...Array.from({ length: 30 }, (_, i) => `tx${i}@example.net`),
      ...Array.from({ length: 30 }, (_, i) => `mk${i}@example.net`),
    ];
    expect([...new Set(recipients)].sort()).toEqual([...expected].sort());
    const unexplained = expected
      .map((to) => {
        const atSes = env.ses.messagesTo(to);
        const answers = atSes.filter((m) => answered.has(m.messageId)).length;
        const timeouts = timedOut.filter((t) => t === to).length;
        return { to, answers, lostAnswers: atSes.length - answers, timeouts };
      })
      .filter((e) => e.answers !== 1 || e.lostAnswers > e.timeouts);
    expect(unexplained).toEqual([]);
  } finally {
    sesCalls.mockRestore();
  }
});
