import { startTestRelay, type TestRelay } from './testing/smtp-harness';
import { openSmtpDialog } from './testing/smtp-dialog';

// The API's header rules on a message an SMTP client wrote itself (core headers.ts): one From,
// header lines that end in CRLF only, and every header that names a sender (From, Sender,
// Return-Path) at a domain the key may send from. SES checks those against every identity the
// account has verified, another team's too, so the relay is where a team is held to its own.

let t: TestRelay;
let teamB: { teamId: number; apiKey: string };
let domainB: { id: number; name: string };
beforeAll(async () => {
  // Insecure AUTH for the bare socket below: Nodemailer turns a bare LF into CRLF before sending.
  t = await startTestRelay({ API_RATE_LIMIT: '0', SMTP_ALLOW_INSECURE_AUTH: 'true' });
  teamB = await t.newTeam('Team B');
  domainB = await t.addDomain(teamB.teamId, 'team-b.example.com');
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
const ENVELOPE = { from: 'hello@relay.example.com', to: ['x@dest.org'] };
/** A message of the given header lines (CRLF added unless a line brings its own ending) and a unique Subject. */
function message(headers: string[]): { raw: Buffer; subject: string } {
  const subject = `Header rule ${++seq}`;
  const lines = [...headers, `Subject: ${subject}`, 'To: x@dest.org'].map((h) => (/[\r\n]$/.test(h) ? h : `${h}\r\n`));
  return { raw: Buffer.from(`${lines.join('')}\r\nBody\r\n`), subject };
}
const send = (raw: Buffer, pass?: string) =>
  t
    .transport({ pass })
    .sendMail({ envelope: ENVELOPE, raw })
    .then(
      (info) => ({ code: 250, response: info.response }),
      (err: { responseCode?: number; response?: string }) => ({ code: err.responseCode, response: err.response }),
    );
/** The message's bytes exactly as given, over a bare socket: the reply to its end of DATA. */
async function sendExactly(raw: Buffer): Promise<string[]> {
  const dialog = await openSmtpDialog(t.relay.ports.starttls!);
  try {
    await dialog.command('EHLO client.test');
    await dialog.command(`AUTH PLAIN ${Buffer.from(`\0mailrail\0${t.team.apiKey}`).toString('base64')}`);
    await dialog.command('MAIL FROM:<hello@relay.example.com>');
    await dialog.command('RCPT TO:<x@dest.org>');
    await dialog.command('DATA');
    dialog.write(Buffer.concat([raw, Buffer.from('.\r\n')]));
    return await dialog.reply();
  } finally {
    dialog.close();
  }
}
const stored = (subject: string) => t.db.email.count({ where: { subject } });

describe("headers naming another team's verified domain (team A's key)", () => {
  it('refuses a second From header, whichever comes first, with 550 5.6.0 and stores nothing', async () => {
    for (const order of [
      ['From: hello@relay.example.com', `From: boss@${domainB.name}`],
      [`From: boss@${domainB.name}`, 'From: hello@relay.example.com'],
    ]) {
      const m = message(order);
      expect(await send(m.raw)).toEqual({ code: 550, response: '550 5.6.0 The message needs exactly one From header' });
      expect(await stored(m.subject)).toBe(0);
    }
  });

  it("refuses a Sender at team B's domain with 550 5.7.1", async () => {
    const m = message(['From: hello@relay.example.com', `Sender: Boss <boss@${domainB.name}>`]);
    expect(await send(m.raw)).toEqual({
      code: 550,
      response: `550 5.7.1 Sender: Domain: ${domainB.name} not found. Add it and verify it before sending`,
    });
    expect(await stored(m.subject)).toBe(0);
  });

  it("refuses a Return-Path at team B's domain with 550 5.7.1", async () => {
    const m = message([`Return-Path: <bounces@${domainB.name}>`, 'From: hello@relay.example.com']);
    expect(await send(m.raw)).toEqual({
      code: 550,
      response: `550 5.7.1 Return-Path: Domain: ${domainB.name} not found. Add it and verify it before sending`,
    });
    expect(await stored(m.subject)).toBe(0);
  });

  it('refuses a Sender that names no single valid address with 550 5.6.0', async () => {
    const m = message(['From: hello@relay.example.com', 'Sender: nobody']);
    expect(await send(m.raw)).toEqual({ code: 550, response: '550 5.6.0 Sender must name one valid address' });
  });

  it('refuses a bare CR or a bare LF in the header block with 550 5.6.0, a hidden Sender line included', async () => {
    for (const hidden of [`X-Note: a\rSender: boss@${domainB.name}`, `X-Note: a\nSender: boss@${domainB.name}`, 'X-Note: a\n']) {
      const m = message(['From: hello@relay.example.com', hidden]);
      expect(await sendExactly(m.raw)).toEqual(['550 5.6.0 Every header line must end in CRLF: a bare CR or LF is refused']);
      expect(await stored(m.subject)).toBe(0);
    }
  });

  it("team B's own key may name its domain in Sender and Return-Path; team A's domain is refused to it", async () => {
    const own = message([`From: a@${domainB.name}`, `Sender: boss@${domainB.name}`, `Return-Path: <bounces@${domainB.name}>`]);
    const ok = await t
      .transport({ pass: teamB.apiKey })
      .sendMail({ envelope: { from: `a@${domainB.name}`, to: ['x@dest.org'] }, raw: own.raw });
    expect(ok.response).toMatch(/^250 2\.0\.0 OK /);
    const foreign = message([`From: a@${domainB.name}`, 'Sender: hello@relay.example.com']);
    const refused = await t
      .transport({ pass: teamB.apiKey })
      .sendMail({ envelope: { from: `a@${domainB.name}`, to: ['x@dest.org'] }, raw: foreign.raw })
      .catch((err: { responseCode?: number }) => err);
    expect((refused as { responseCode?: number }).responseCode).toBe(550);
  });
});

describe('what stays allowed', () => {
  it('takes a Sender at another verified domain of the team, a folded one, and the null Return-Path', async () => {
    const second = await t.addDomain(t.team.teamId, 'second.relay.example.com');
    const m = message(['From: hello@relay.example.com', `Sender: "Ops"\r\n <ops@${second.name}>`, 'Return-Path: <>']);
    expect((await send(m.raw)).response).toMatch(/^250 2\.0\.0 OK /);
    expect(await stored(m.subject)).toBe(1);
  });

  it('a key bound to one domain is refused a Sender at another domain of its own team (550 5.7.1)', async () => {
    const third = await t.addDomain(t.team.teamId, 'third.relay.example.com');
    const bound = await t.newKey(t.team.teamId, { domainId: t.domain.id, permission: 'SENDING' });
    const m = message(['From: hello@relay.example.com', `Sender: ops@${third.name}`]);
    expect(await send(m.raw, bound)).toEqual({
      code: 550,
      response: `550 5.7.1 Sender: API key does not have access to domain: ${third.name}`,
    });
  });
});
