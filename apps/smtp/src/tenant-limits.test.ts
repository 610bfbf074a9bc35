import { startTestRelay, type TestRelay } from './testing/smtp-harness';
import { openSmtpDialog, type SmtpDialog } from './testing/smtp-dialog';

// What one client or one team may hold of a relay that every team shares: connections per client
// address, time to log in, session lifetime, AUTH before STARTTLS (counted as a failed login), and
// the bytes of messages held in memory per team and per process. Outcomes are counted; no test
// measures how long anything took.

const plainAuth = (key: string) => `AUTH PLAIN ${Buffer.from(`\0mailrail\0${key}`).toString('base64')}`;
/** A send's SMTP error (nodemailer's), or null when it was accepted. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: { responseCode?: number; response?: string }) => ({ code: err.responseCode, response: err.response }),
  );

async function until(probe: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await probe()); i++) await new Promise((r) => setTimeout(r, 20));
  expect(await probe()).toBe(true);
}

describe('connections that do not log in', () => {
  let t: TestRelay;
  beforeAll(async () => {
    t = await startTestRelay({
      SMTP_MAX_CONNECTIONS_PER_IP: '3',
      SMTP_AUTH_TIMEOUT_MS: '1500',
      SMTP_MAX_SESSION_MS: '4000',
      AUTH_FAILURES_PER_MINUTE: '4',
      // Lets a loopback dialog log in without TLS: the limits are the same either way.
      SMTP_ALLOW_INSECURE_AUTH: 'true',
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a client address its 4th connection with 421 at connect, and takes it again once one closes', async () => {
    const open = [];
    for (let i = 0; i < 3; i++) open.push(await openSmtpDialog(t.relay.ports.starttls!));
    try {
      expect(open.map((d) => d.greeting[0].slice(0, 4))).toEqual(['220 ', '220 ', '220 ']);
      const fourth = await openSmtpDialog(t.relay.ports.starttls!);
      expect(fourth.greeting).toEqual(['421 4.7.0 Too many connections from this address (at most 3), try again later']);
      await fourth.closed;
      open.shift()!.close();
      await until(async () => {
        const again = await openSmtpDialog(t.relay.ports.starttls!);
        again.close();
        return again.greeting[0].startsWith('220 ');
      });
    } finally {
      for (const d of open) d.close();
    }
  });

  it('closes a connection that has not authenticated within SMTP_AUTH_TIMEOUT_MS with 421; a logged-in one stays', async () => {
    const idle = await openSmtpDialog(t.relay.ports.starttls!);
    const loggedIn = await openSmtpDialog(t.relay.ports.starttls!);
    try {
      await idle.command('EHLO client.test');
      await loggedIn.command('EHLO client.test');
      expect((await loggedIn.command(plainAuth(t.team.apiKey)))[0]).toMatch(/^235 /);
      // Well within smtp-server's idle timeout (60 s): only the login deadline ends this session.
      expect(await idle.reply()).toEqual(['421 4.7.0 Not authenticated within 2 seconds of connecting, closing']);
      await idle.closed;
      expect(await loggedIn.command('NOOP')).toEqual(['250 OK']);
    } finally {
      idle.close();
      loggedIn.close();
    }
  });

  it('ends a logged-in session at SMTP_MAX_SESSION_MS with 421 4.3.0', async () => {
    const dialog = await openSmtpDialog(t.relay.ports.starttls!);
    try {
      await dialog.command('EHLO client.test');
      expect((await dialog.command(plainAuth(t.team.apiKey)))[0]).toMatch(/^235 /);
      expect(await dialog.reply()).toEqual(['421 4.3.0 Session lifetime reached, reconnect to go on']);
      await dialog.closed;
    } finally {
      dialog.close();
    }
  });

  it('counts AUTH before STARTTLS as a failed login of the address: past AUTH_FAILURES_PER_MINUTE even a good key is refused', async () => {
    // Its own relay and Redis prefix, where AUTH needs TLS.
    const strict = await startTestRelay({ AUTH_FAILURES_PER_MINUTE: '3' });
    try {
      const first = await openSmtpDialog(strict.relay.ports.starttls!);
      await first.command('EHLO client.test');
      expect((await first.command(plainAuth(strict.team.apiKey)))[0]).toMatch(/^538 /);
      expect((await first.command(plainAuth(strict.team.apiKey)))[0]).toMatch(/^538 /);
      // The third on one connection closes it.
      expect((await first.command(plainAuth(strict.team.apiKey)))[0]).toMatch(/^538 /);
      expect(await first.reply()).toEqual(['421 4.7.0 AUTH before STARTTLS again, closing: use STARTTLS or the implicit TLS port']);
      await first.closed;
      const second = await openSmtpDialog(strict.relay.ports.starttls!);
      await second.command('EHLO client.test');
      expect((await second.command(plainAuth(strict.team.apiKey)))[0]).toMatch(/^538 /);
      expect((await second.reply())[0]).toMatch(/^421 4\.7\.0 Too many failed authentications from this address/);
      await second.closed;
      // Four failures counted: a good key over TLS is refused too, before any lookup.
      const refused = await failure(strict.transport().sendMail({ from: 'hello@relay.example.com', to: 'x@dest.org', text: 'x' }));
      expect(refused?.code).toBe(421);
      const text = await strict.deps.metrics.registry.metrics();
      expect(text).toMatch(/mailrail_smtp_connections_closed_total\{reason="auth-before-tls",process="smtp"\} 2/);
    } finally {
      await strict.close();
    }
  });
});

describe('message bytes in flight', () => {
  let t: TestRelay;
  // 52,428-byte messages at most; a team holds at most 62,914 bytes, the process 73,400.
  beforeAll(async () => {
    t = await startTestRelay({
      EMAIL_MAX_MESSAGE_MB: '0.05',
      SMTP_DATA_TEAM_BUDGET_MB: '0.06',
      SMTP_DATA_BUDGET_MB: '0.07',
      SMTP_DATA_CONCURRENCY_PER_TEAM: '2',
      SMTP_ALLOW_INSECURE_AUTH: 'true',
      API_RATE_LIMIT: '0',
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  const inFlight = async () => (await t.deps.metrics.dataBytesInFlight.get()).values[0]?.value ?? 0;
  const large = (from: string) => ({ from, to: 'x@dest.org', subject: 'Large', text: 'x'.repeat(40_000) });
  const small = (from: string) => ({ from, to: 'x@dest.org', subject: 'Small', text: 'hello' });

  /** A message of the team's key sent up to `bytes` of its DATA and held there (no final dot). */
  async function holdMessage(key: string, from: string, bytes: number, headerFrom = from): Promise<SmtpDialog> {
    const before = await inFlight();
    const dialog = await openSmtpDialog(t.relay.ports.starttls!);
    await dialog.command('EHLO client.test');
    expect((await dialog.command(plainAuth(key)))[0]).toMatch(/^235 /);
    expect((await dialog.command(`MAIL FROM:<${from}>`))[0]).toMatch(/^250 /);
    expect((await dialog.command('RCPT TO:<held@dest.org>'))[0]).toMatch(/^250 /);
    expect((await dialog.command('DATA'))[0]).toMatch(/^354 /);
    const head = `From: ${headerFrom}\r\nTo: held@dest.org\r\nSubject: Held\r\n\r\n`;
    dialog.write(head + 'y'.repeat(bytes - head.length));
    // smtp-server keeps the last bytes back until it knows they do not end the message.
    await until(async () => (await inFlight()) >= before + bytes - 16);
    return dialog;
  }

  it("answers 452 to a team's second large message and to any team's past the process budget, while another team's small one goes", async () => {
    const teamB = await t.newTeam('Team B');
    const domainB = await t.addDomain(teamB.teamId, 'b.example.com');
    const teamC = await t.newTeam('Team C');
    const domainC = await t.addDomain(teamC.teamId, 'c.example.com');
    const sendingKeyA = await t.newKey(t.team.teamId, { permission: 'SENDING' });

    const held = await holdMessage(t.team.apiKey, 'hello@relay.example.com', 40_000);
    try {
      // The same team, another key of it (SENDING): the team's share is spent.
      const secondOfA = await failure(t.transport({ pass: sendingKeyA }).sendMail(large('hello@relay.example.com')));
      expect(secondOfA?.code).toBe(452);
      expect(secondOfA?.response).toMatch(/^452 4\.3\.1 Insufficient system storage: /);
      // Another team's small message fits.
      expect((await t.transport({ pass: teamB.apiKey }).sendMail(small(`a@${domainB.name}`))).response).toMatch(/^250 2\.0\.0 OK /);
      // A third team's large one would pass the process budget.
      expect((await failure(t.transport({ pass: teamC.apiKey }).sendMail(large(`a@${domainC.name}`))))?.code).toBe(452);

      // The held message ends: answered, and its bytes given back.
      held.write('\r\n.\r\n');
      expect((await held.reply())[0]).toMatch(/^250 2\.0\.0 OK /);
    } finally {
      held.close();
    }
    await until(async () => (await inFlight()) === 0);
    expect((await t.transport({ pass: teamC.apiKey }).sendMail(large(`a@${domainC.name}`))).response).toMatch(/^250 /);
    expect((await t.transport().sendMail(large('hello@relay.example.com'))).response).toMatch(/^250 /);
  });

  it('gives the bytes back when a held message is refused, and when its client leaves in the middle of DATA', async () => {
    const stranger = await t.newTeam('Stranger');
    const strangerDomain = await t.addDomain(stranger.teamId, 'stranger.example.com');
    // Its From header names another team's domain: refused at the end of DATA.
    const held = await holdMessage(t.team.apiKey, 'hello@relay.example.com', 40_000, `a@${strangerDomain.name}`);
    held.write('\r\n.\r\n');
    expect((await held.reply())[0]).toMatch(/^550 5\.7\.1 /);
    held.close();
    await until(async () => (await inFlight()) === 0);

    const left = await holdMessage(t.team.apiKey, 'hello@relay.example.com', 40_000);
    left.close();
    await until(async () => (await inFlight()) === 0);
    expect((await t.transport().sendMail(large('hello@relay.example.com'))).response).toMatch(/^250 /);
  });

  it('answers 452 to a team past SMTP_DATA_CONCURRENCY_PER_TEAM messages in flight, not to another team', async () => {
    const other = await t.newTeam('Other');
    const otherDomain = await t.addDomain(other.teamId, 'other.example.com');
    const held = [
      await holdMessage(t.team.apiKey, 'hello@relay.example.com', 2_000),
      await holdMessage(t.team.apiKey, 'hello@relay.example.com', 2_000),
    ];
    try {
      const third = await failure(t.transport().sendMail(small('hello@relay.example.com')));
      expect(third).toEqual({
        code: 452,
        response: '452 4.3.1 Insufficient system storage: this team already has 2 messages in flight, try again later',
      });
      expect((await t.transport({ pass: other.apiKey }).sendMail(small(`a@${otherDomain.name}`))).response).toMatch(/^250 /);
    } finally {
      for (const d of held) d.close();
    }
    await until(async () => (await inFlight()) === 0);
    expect((await t.transport().sendMail(small('hello@relay.example.com'))).response).toMatch(/^250 /);
  });
});
