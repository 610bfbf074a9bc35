import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { announceApiKeyRevocations, revokeApiKey } from '@mailrail/domain/teams/api-keys';
import { startTestRelay, type TestRelay } from './testing/smtp-harness';
import { openSmtpDialog } from './testing/smtp-dialog';

// The relay through real SMTP clients (Nodemailer's SMTP transport, swaks when installed, and a
// bare socket for exact replies) against the real PostgreSQL and Redis: each accepted message
// is an email row, as POST /api/v1/emails makes it; each refusal has its reply code and stores nothing.

let t: TestRelay;
beforeAll(async () => {
  t = await startTestRelay({ EMAIL_MAX_MESSAGE_MB: '0.05', API_RATE_LIMIT: '0' });
});
afterAll(async () => {
  await t?.close();
});

const OK = /^250 2\.0\.0 OK ([0-9a-z]+)$/;
let seq = 0;
const subject = (label: string) => `${label} ${++seq}`;

const build = (mail: Mail.Options) => new MailComposer(mail).compile().build();
const idOf = (response: string) => OK.exec(response)?.[1];
const rowBySubject = (s: string) => t.db.email.findMany({ where: { subject: s }, include: { emailEvents: true } });
/** A send's SMTP error (nodemailer's), or null when it was accepted. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: { responseCode?: number; response?: string }) => ({ code: err.responseCode, response: err.response }),
  );

describe('accepting a message', () => {
  it('over STARTTLS: 250 with the email id; the row holds the parsed fields, the raw MIME as received, a QUEUED event', async () => {
    const s = subject('Hello');
    const raw = await build({
      from: 'Relay <hello@relay.example.com>',
      to: 'Ann <ann@dest.org>',
      subject: s,
      text: 'Hi text',
      html: '<p>Hi</p>',
    });
    const info = await t.transport().sendMail({ envelope: { from: 'hello@relay.example.com', to: ['ann@dest.org'] }, raw });
    const id = idOf(info.response);
    expect(id).toBeDefined();
    const row = await t.db.email.findUniqueOrThrow({ where: { id }, include: { emailEvents: true } });
    expect(row).toMatchObject({
      teamId: t.team.teamId,
      domainId: t.domain.id,
      from: 'Relay <hello@relay.example.com>',
      to: ['Ann <ann@dest.org>'],
      cc: [],
      bcc: [],
      subject: s,
      text: 'Hi text',
      html: '<p>Hi</p>',
      latestStatus: 'QUEUED',
      headers: null,
      attachments: null,
      source: 'SMTP',
      attachmentList: null,
    });
    expect(Buffer.from(row.rawMessage!).equals(raw)).toBe(true);
    expect(row.emailEvents.map((e) => e.status)).toEqual(['QUEUED']);
  });

  it('lists the attachments of a message by name, type and size (the email page shows them), inline images left out', async () => {
    const s = subject('Attached');
    const pdf = Buffer.from('%PDF-1.4 relay');
    const raw = await build({
      from: 'hello@relay.example.com',
      to: 'ann@dest.org',
      subject: s,
      text: 'see attached',
      html: '<p><img src="cid:logo@x"></p>',
      attachments: [
        { filename: 'report.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'logo.png', content: Buffer.from('png'), contentType: 'image/png', cid: 'logo@x' },
      ],
    });
    const info = await t.transport().sendMail({ envelope: { from: 'hello@relay.example.com', to: ['ann@dest.org'] }, raw });
    const row = await t.db.email.findUniqueOrThrow({ where: { id: idOf(info.response) } });
    expect(row.attachmentList).toEqual([{ filename: 'report.pdf', contentType: 'application/pdf', size: pdf.length }]);
  });

  it('over implicit TLS, with AUTH LOGIN and the username usesend', async () => {
    const s = subject('Implicit');
    const transport = t.transport({ secure: true, user: 'usesend' });
    const info = await transport.sendMail({ from: 'hello@relay.example.com', to: 'bob@dest.org', subject: s, text: 'x' });
    expect(info.response).toMatch(OK);
    expect(await rowBySubject(s)).toHaveLength(1);
    const login = t.transport({ secure: true, authMethod: 'LOGIN' });
    expect(
      (await login.sendMail({ from: 'hello@relay.example.com', to: 'bob@dest.org', subject: `${s} login`, text: 'x' })).response,
    ).toMatch(OK);
  });

  it('lets the envelope decide who receives it: RCPT TO not in the headers are bcc, header addresses not in the envelope are dropped', async () => {
    const s = subject('Envelope');
    const raw = await build({
      from: 'hello@relay.example.com',
      to: 'Ann <ann@dest.org>, left-out@dest.org',
      cc: 'Cy <cy@dest.org>',
      subject: s,
      text: 'x',
    });
    const info = await t
      .transport()
      .sendMail({ envelope: { from: 'hello@relay.example.com', to: ['ann@dest.org', 'cy@dest.org', 'blind@dest.org'] }, raw });
    const row = await t.db.email.findUniqueOrThrow({ where: { id: idOf(info.response) } });
    expect([row.to, row.cc, row.bcc]).toEqual([['Ann <ann@dest.org>'], ['Cy <cy@dest.org>'], ['blind@dest.org']]);
  });

  it('names every envelope recipient `to` when the To header lists none of them (undisclosed recipients)', async () => {
    const s = subject('Undisclosed');
    const raw = await build({ from: 'hello@relay.example.com', to: 'undisclosed-recipients:;', subject: s, text: 'x' });
    const info = await t.transport().sendMail({ envelope: { from: 'hello@relay.example.com', to: ['a@dest.org', 'b@dest.org'] }, raw });
    const row = await t.db.email.findUniqueOrThrow({ where: { id: idOf(info.response) } });
    expect([row.to, row.cc, row.bcc]).toEqual([['a@dest.org', 'b@dest.org'], [], []]);
  });

  it('keeps an email whose every To recipient is suppressed as SUPPRESSED, as the API does', async () => {
    await t.db.suppression.create({ data: { id: `sup${seq}`, teamId: t.team.teamId, email: 'gone@dest.org', reason: 'HARD_BOUNCE' } });
    const info = await t
      .transport()
      .sendMail({ from: 'hello@relay.example.com', to: 'gone@dest.org', subject: subject('Suppressed'), text: 'x' });
    const row = await t.db.email.findUniqueOrThrow({ where: { id: idOf(info.response) } });
    expect(row.latestStatus).toBe('SUPPRESSED');
  });

  it('answers a resubmitted message (same Message-ID, recipients and bytes) with the first id and stores it once', async () => {
    const s = subject('Resubmit');
    const raw = await build({
      from: 'hello@relay.example.com',
      to: 'r@dest.org',
      subject: s,
      text: 'x',
      messageId: `<resubmit-${seq}@client.test>`,
    });
    const envelope = { from: 'hello@relay.example.com', to: ['r@dest.org'] };
    const first = await t.transport().sendMail({ envelope, raw });
    const again = await t.transport().sendMail({ envelope, raw });
    expect(idOf(again.response)).toBe(idOf(first.response));
    expect(await rowBySubject(s)).toHaveLength(1);
    // The same Message-ID on another message is not a resubmit: it is stored, not refused.
    const other = await t.transport().sendMail({
      envelope,
      raw: await build({
        from: 'hello@relay.example.com',
        to: 'r@dest.org',
        subject: s,
        text: 'changed',
        messageId: `<resubmit-${seq}@client.test>`,
      }),
    });
    expect(idOf(other.response)).not.toBe(idOf(first.response));
    expect(await rowBySubject(s)).toHaveLength(2);
  });

  it('honours X-Mailrail-Idempotency-Key: a replay gets the first id, another message under the key 554', async () => {
    const s = subject('Keyed');
    const mail = {
      from: 'hello@relay.example.com',
      to: 'k@dest.org',
      subject: s,
      headers: { 'X-Mailrail-Idempotency-Key': `order-${seq}` },
    };
    const raw = await build({ ...mail, text: 'one' });
    const envelope = { from: 'hello@relay.example.com', to: ['k@dest.org'] };
    const first = await t.transport().sendMail({ envelope, raw });
    expect(idOf((await t.transport().sendMail({ envelope, raw })).response)).toBe(idOf(first.response));
    const refused = await failure(t.transport().sendMail({ envelope, raw: await build({ ...mail, text: 'two' }) }));
    expect(refused).toEqual({ code: 554, response: '554 5.6.0 X-Mailrail-Idempotency-Key was already used for a different message' });
    expect(await rowBySubject(s)).toHaveLength(1);
  });
});

describe('authentication', () => {
  it('refuses a wrong API key and a wrong username with 535 5.7.8', async () => {
    const wrongKey = await failure(
      t
        .transport({ pass: 'us_abcdefghij_00000000000000000000000000000000' })
        .sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', text: 'x' }),
    );
    expect(wrongKey).toMatchObject({ code: 535 });
    expect(wrongKey!.response).toMatch(/^535 5\.7\.8 /);
    expect(
      await failure(t.transport({ user: 'admin' }).sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', text: 'x' })),
    ).toMatchObject({ code: 535 });
  });

  it('refuses a revoked key at once', async () => {
    const key = await t.newKey(t.team.teamId);
    const transport = () => t.transport({ pass: key });
    expect(
      (await transport().sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', subject: subject('Before revoke'), text: 'x' }))
        .response,
    ).toMatch(OK);
    const revoked = await revokeApiKey(t.db, key);
    // Revoked by another process (no cache of the relay's to evict): only the announcement reaches the
    // relay's subscriber, asynchronously, so the next AUTH fails once it has.
    await announceApiKeyRevocations({ redis: t.deps.redis, config: t.config, log: t.deps.log, apiKeyCache: null }, [revoked!.clientId]);
    const deadline = Date.now() + 10_000;
    let result = await failure(transport().sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', text: 'x' }));
    while (!result && Date.now() < deadline)
      result = await failure(transport().sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', text: 'x' }));
    expect(result).toMatchObject({ code: 535 });
  });

  it('takes AUTH only after TLS: on a plain connection EHLO offers STARTTLS, AUTH is 538, MAIL FROM is 530', async () => {
    const dialog = await openSmtpDialog(t.relay.ports.starttls!);
    try {
      expect(dialog.greeting[0]).toMatch(/^220 /);
      const ehlo = await dialog.command('EHLO client.test');
      expect(ehlo).toContain('250-STARTTLS');
      expect(ehlo.find((l) => l.includes('SIZE'))).toMatch(/SIZE 52428$/);
      expect((await dialog.command(`AUTH PLAIN ${Buffer.from(`\0mailrail\0${t.team.apiKey}`).toString('base64')}`))[0]).toMatch(/^538 /);
      expect(await dialog.command('MAIL FROM:<hello@relay.example.com>')).toEqual(['530 5.7.0 Authentication required']);
    } finally {
      dialog.close();
    }
  });
});

describe('per-IP failure limit and the development flag', () => {
  let loose: TestRelay;
  beforeAll(async () => {
    loose = await startTestRelay({ AUTH_FAILURES_PER_MINUTE: '2', SMTP_ALLOW_INSECURE_AUTH: 'true' });
  });
  afterAll(async () => {
    await loose?.close();
  });
  const plain = (key: string) => `AUTH PLAIN ${Buffer.from(`\0mailrail\0${key}`).toString('base64')}`;

  it('SMTP_ALLOW_INSECURE_AUTH lets a loopback client authenticate without TLS', async () => {
    const dialog = await openSmtpDialog(loose.relay.ports.starttls!);
    try {
      await dialog.command('EHLO client.test');
      expect((await dialog.command(plain(loose.team.apiKey)))[0]).toMatch(/^235 /);
      expect(await dialog.command('MAIL FROM:<hello@relay.example.com>')).toEqual(['250 Accepted']);
    } finally {
      dialog.close();
    }
  });

  it('after AUTH_FAILURES_PER_MINUTE failures the IP gets 421 4.7.0 and the connection closes, even with a good key', async () => {
    const dialog = await openSmtpDialog(loose.relay.ports.starttls!);
    try {
      await dialog.command('EHLO client.test');
      const bad = plain('us_abcdefghij_00000000000000000000000000000000');
      expect((await dialog.command(bad))[0]).toMatch(/^535 5\.7\.8 /);
      expect((await dialog.command(bad))[0]).toMatch(/^535 5\.7\.8 /);
      expect((await dialog.command(bad))[0]).toMatch(/^421 4\.7\.0 Too many failed authentications/);
    } finally {
      dialog.close();
    }
    const again = await openSmtpDialog(loose.relay.ports.starttls!);
    try {
      await again.command('EHLO client.test');
      // A key not cached yet: refused before any database lookup.
      expect((await again.command(plain(await loose.newKey(loose.team.teamId))))[0]).toMatch(/^421 4\.7\.0 /);
    } finally {
      again.close();
    }
  });
});

describe('who may send from where (cross-team, cross-scope)', () => {
  it('a SENDING key sends', async () => {
    const key = await t.newKey(t.team.teamId, { permission: 'SENDING' });
    expect(
      (
        await t
          .transport({ pass: key })
          .sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', subject: subject('Sending key'), text: 'x' })
      ).response,
    ).toMatch(OK);
  });

  it('a key bound to one domain sends from it and is refused (553 5.7.1) on another domain of its team', async () => {
    const other = await t.addDomain(t.team.teamId, `other${++seq}.example.com`);
    const bound = await t.newKey(t.team.teamId, { domainId: t.domain.id });
    const transport = t.transport({ pass: bound });
    expect(
      (await transport.sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', subject: subject('Bound'), text: 'x' })).response,
    ).toMatch(OK);
    expect(await failure(transport.sendMail({ from: `hello@${other.name}`, to: 'x@dest.org', text: 'x' }))).toEqual({
      code: 553,
      response: `553 5.7.1 API key does not have access to domain: ${other.name}`,
    });
  });

  it("another team's key cannot send from this team's domain", async () => {
    const stranger = await t.newTeam('Stranger');
    expect(
      await failure(t.transport({ pass: stranger.apiKey }).sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', text: 'x' })),
    ).toEqual({
      code: 553,
      response: '553 5.7.1 Domain: relay.example.com not found. Add it and verify it before sending',
    });
  });

  it('refuses an unverified domain at MAIL FROM (553) and at the From header (550), storing nothing', async () => {
    const pending = await t.addDomain(t.team.teamId, `pending${++seq}.example.com`, { verified: false });
    expect(await failure(t.transport().sendMail({ from: `a@${pending.name}`, to: 'x@dest.org', text: 'x' }))).toEqual({
      code: 553,
      response: `553 5.7.1 Domain: ${pending.name} is not verified`,
    });
    const s = subject('Header from');
    const raw = await build({ from: `a@${pending.name}`, to: 'x@dest.org', subject: s, text: 'x' });
    expect(await failure(t.transport().sendMail({ envelope: { from: 'hello@relay.example.com', to: ['x@dest.org'] }, raw }))).toEqual({
      code: 550,
      response: `550 5.7.1 Domain: ${pending.name} is not verified`,
    });
    expect(await rowBySubject(s)).toHaveLength(0);
  });
});

describe('limits', () => {
  it('refuses a message over EMAIL_MAX_MESSAGE_MB with 552 5.3.4 and stores nothing', async () => {
    const s = subject('Too big');
    const err = await failure(
      t.transport().sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', subject: s, text: 'x'.repeat(60_000) }),
    );
    expect(err?.code).toBe(552);
    expect(err?.response).toMatch(/^552 5\.3\.4 Message too large/);
    expect(await rowBySubject(s)).toHaveLength(0);
  });

  it('takes 50 recipients and answers the 51st with 452 4.5.3; the email goes to the 50', async () => {
    const s = subject('Many');
    const to = Array.from({ length: 51 }, (_, i) => `r${i}@dest.org`);
    const info = await t.transport().sendMail({ from: 'hello@relay.example.com', to, subject: s, text: 'x' });
    expect(info.rejected).toEqual(['r50@dest.org']);
    expect((info as unknown as { rejectedErrors: { responseCode: number; response: string }[] }).rejectedErrors[0].response).toMatch(
      /^452 4\.5\.3 /,
    );
    const [row] = await rowBySubject(s);
    expect(row.to).toHaveLength(50);
  });

  it("counts each message against the team's rate and answers 454 4.7.0 beyond it", async () => {
    const team = await t.newTeam('Slow team');
    await t.db.team.update({ where: { id: team.teamId }, data: { apiRateLimit: 1 } });
    const domain = await t.addDomain(team.teamId, `slow${++seq}.example.com`);
    const transport = t.transport({ pass: team.apiKey, pool: true });
    // One message per one-second window: two in the same window (at most 20 tries) meet the limit.
    let refused: { code?: number; response?: string } | null = null;
    for (let i = 0; i < 20 && !refused; i++)
      refused = await failure(transport.sendMail({ from: `a@${domain.name}`, to: 'x@dest.org', text: 'x' }));
    expect(refused?.code).toBe(454);
    expect(refused?.response).toMatch(/^454 4\.7\.0 Throttling failure/);
  });
});

describe('clients', () => {
  const swaks = ['/usr/bin/swaks', '/usr/local/bin/swaks'].find((p) => existsSync(p));
  const run = (args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(swaks!, args, { timeout: 30_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    );
  const swaksIt = swaks ? it : it.skip;
  if (!swaks) console.warn('swaks is not installed (apt-get install swaks): its tests are skipped');

  swaksIt('swaks sends over STARTTLS and implicit TLS with AUTH PLAIN and LOGIN', async () => {
    const common = [
      '--from',
      'hello@relay.example.com',
      '--to',
      'swaks@dest.org',
      '--server',
      '127.0.0.1',
      '--auth-user',
      'mailrail',
      '--auth-password',
      t.team.apiKey,
    ];
    const starttls = await run([
      ...common,
      '--port',
      String(t.relay.ports.starttls),
      '--tls',
      '--auth',
      'PLAIN',
      '--header',
      `Subject: ${subject('swaks')}`,
    ]);
    expect(starttls.out).toMatch(/<~\s+250 2\.0\.0 OK [0-9a-z]+/);
    expect(starttls.code).toBe(0);
    const implicit = await run([
      ...common,
      '--port',
      String(t.relay.ports.tls),
      '--tls-on-connect',
      '--auth',
      'LOGIN',
      '--header',
      `Subject: ${subject('swaks')}`,
    ]);
    expect(implicit.out).toMatch(/<~\s+250 2\.0\.0 OK [0-9a-z]+/);
    expect(implicit.code).toBe(0);
  });
});

describe('metrics', () => {
  it('counts connections, messages by outcome, bytes and auth failures', async () => {
    const text = await t.deps.metrics.registry.metrics();
    expect(text).toMatch(/mailrail_smtp_connections_total\{port="starttls",process="smtp"\} [1-9]/);
    expect(text).toMatch(/mailrail_smtp_messages_total\{outcome="accepted",process="smtp"\} [1-9]/);
    expect(text).toMatch(/mailrail_smtp_messages_total\{outcome="too-large",process="smtp"\} [1-9]/);
    expect(text).toMatch(/mailrail_smtp_received_bytes_total\{process="smtp"\} [1-9]/);
    expect(text).toMatch(/mailrail_auth_failures_total\{reason="invalid-key",process="smtp"\} [1-9]/);
  });
});
