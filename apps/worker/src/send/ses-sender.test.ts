import { startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { createSesV2Sender, type RawEmailToSend, type SesSender } from './ses-sender';

// The sender's deadlines are checked as the request leaves, after the SDK's own steps: a process
// busy between the call and the dispatch must not send a message late for its rate slot. The
// tests move the clock (jest's fake Date; timers, ticks and I/O stay real) where a busy process
// would have spent the time, so the outcome does not depend on how fast this machine is.
describe('createSesV2Sender deadlines', () => {
  let fake: FakeSes;
  let ses: SesSender;
  const email = (extra: Partial<RawEmailToSend> = {}): RawEmailToSend => ({
    region: 'us-east-1',
    raw: Buffer.from('From: a@example.com\r\nTo: b@example.org\r\nSubject: hi\r\n\r\nhello\r\n'),
    destination: { to: ['b@example.org'], cc: [], bcc: [] },
    ...extra,
  });

  beforeAll(async () => {
    fake = await startFakeSes();
    ses = createSesV2Sender({ SES_ENDPOINT: fake.url, SES_TIMEOUT_MS: 2000, SEND_CONCURRENCY: 2 });
    await ses.sendRawEmail(email()); // opens the connection and loads the credentials
  });
  afterAll(async () => {
    ses.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    jest.useFakeTimers({
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
  });
  afterEach(() => jest.useRealTimers());
  /** Time passes on the clock the sender reads, as while this process is busy. */
  const busyFor = (ms: number) => jest.setSystemTime(Date.now() + ms);

  it('sends when the deadlines are ahead', async () => {
    const out = await ses.sendRawEmail(email({ leaveBy: Date.now() + 1000, startBy: Date.now() + 1000 }));
    expect(out).toMatchObject({ sent: true, messageId: expect.any(String) });
    expect(fake.messages).toHaveLength(1);
  });

  it('refuses to send once the slot has passed, and SES gets nothing', async () => {
    expect(await ses.sendRawEmail(email({ leaveBy: Date.now() - 1 }))).toEqual({ sent: false, reason: 'late-for-slot' });
    expect(await ses.sendRawEmail(email({ startBy: Date.now() - 1 }))).toEqual({ sent: false, reason: 'claim-running-out' });
    expect(fake.sendCalls).toBe(0);
  });

  it('checks the slot as the request leaves, not when the call starts', async () => {
    // On time when the call starts; the process then stays busy past the slot before the SDK's
    // steps can run, as a worker busy with other sends does.
    const sent = ses.sendRawEmail(email({ leaveBy: Date.now() + 5 }));
    busyFor(30); // the event loop is held
    expect(await sent).toEqual({ sent: false, reason: 'late-for-slot' });
    expect(fake.sendCalls).toBe(0);
  });

  it('does not send late because other work was queued behind the check', async () => {
    // Work queued as promise continuations (other sends' MIME, signing, database answers) runs
    // before the SDK's socket write, which Node defers to the end of the queue: checked in the
    // middle of that queue, a message on time at the check reached SES hundreds of ms later.
    const leaveBy = Date.now() + 100;
    const sent = ses.sendRawEmail(email({ leaveBy })).then((answer) => (answer.sent ? 'sent' : answer.reason));
    for (let i = 0; i < 300; i++) {
      await null;
      busyFor(1); // one ms of work per continuation
    }
    // Checked as the request leaves, after the queued work: 300 ms past a slot 100 ms away, so it
    // is not sent. Checked in the middle of the queue, it would pass and leave 200 ms late.
    expect(await sent).toBe('late-for-slot');
    expect(fake.sendCalls).toBe(0);
  });
});
