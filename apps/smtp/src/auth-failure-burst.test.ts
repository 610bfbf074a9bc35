import { waitFor } from '@mailrail/testing/wait-for';
import { startTestRelay, type TestRelay } from './testing/smtp-harness';
import { openSmtpDialog, type SmtpDialog } from './testing/smtp-dialog';

// SMTP AUTH shares the API's per-IP failure limit, counted before the key's database lookup:
// however many wrong keys one address sends at once, at most AUTH_FAILURES_PER_MINUTE are looked
// up, and a genuine key sent after the limit was reached is refused. Every lookup is counted and
// held until the whole burst has reached one or been answered.

const MAX = 5;
const BURST = 200;

let t: TestRelay;
beforeAll(async () => {
  t = await startTestRelay({
    AUTH_FAILURES_PER_MINUTE: String(MAX),
    // Plain AUTH from loopback, and every connection of the burst from the one test address.
    SMTP_ALLOW_INSECURE_AUTH: 'true',
    SMTP_MAX_CONNECTIONS_PER_IP: '0',
  });
});
afterAll(async () => {
  await t?.close();
});

const plain = (key: string) => `AUTH PLAIN ${Buffer.from(`\0mailrail\0${key}`).toString('base64')}`;
const randomClientId = () => Math.random().toString(36).slice(2, 12).padEnd(10, '0');
const badKey = () => `us_${randomClientId()}_${'0'.repeat(32)}`;

it(`${BURST} simultaneous AUTH with wrong keys from one address look up at most AUTH_FAILURES_PER_MINUTE; a genuine key after them gets 421`, async () => {
  const fresh = await t.newKey(t.team.teamId);
  const dialogs: SmtpDialog[] = await Promise.all(Array.from({ length: BURST }, () => openSmtpDialog(t.relay.ports.starttls!)));
  const findUnique = t.deps.db.apiKey.findUnique.bind(t.deps.db.apiKey);
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let lookups = 0;
  const spy = jest.spyOn(t.deps.db.apiKey, 'findUnique').mockImplementation(((args: Parameters<typeof findUnique>[0]) => {
    lookups++;
    return opened.then(() => findUnique(args));
  }) as unknown as typeof findUnique);
  try {
    await Promise.all(dialogs.map((d) => d.command('EHLO client.test')));
    const replies: string[] = [];
    const settle = (d: SmtpDialog, key: string, i: number) => d.command(plain(key)).then((lines) => (replies[i] = lines[0]));
    const answered = () => replies.filter(Boolean).length;
    const pending = dialogs.slice(0, -1).map((d, i) => settle(d, badKey(), i));
    await waitFor(() => lookups + answered() >= BURST - 1, { timeoutMs: 30_000, intervalMs: 10, what: 'the burst' });
    const before = lookups + answered();
    pending.push(settle(dialogs[BURST - 1], fresh, BURST - 1));
    await waitFor(() => lookups + answered() > before, { timeoutMs: 30_000, intervalMs: 10, what: 'the genuine key' });
    open();
    await Promise.all(pending);

    expect(lookups).toBe(MAX);
    expect(replies.filter((r) => r.startsWith('535 '))).toHaveLength(MAX);
    expect(replies.filter((r) => r.startsWith('421 '))).toHaveLength(BURST - MAX);
    expect(replies[BURST - 1]).toMatch(/^421 4\.7\.0 /);
  } finally {
    open();
    spy.mockRestore();
    for (const d of dialogs) d.close();
  }
});
