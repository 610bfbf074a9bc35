import { spawn } from 'node:child_process';
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { createSesClient } from '@mailrail/platform/ses/client';
import { startFakeSes, type FakeSes } from './fake-ses';

// The rate tests read when each request reached the fake. With stampArrivalsOffThread a stall of
// the test's own thread must not move that time: a request that arrives during the stall keeps
// the time it arrived, not the time the stall ended.

let fake: FakeSes;
afterEach(() => fake?.close());

const sendEmailBody = JSON.stringify({
  Content: { Raw: { Data: Buffer.from('Subject: hi\r\n\r\nbody').toString('base64') } },
  Destination: { ToAddresses: ['a@example.com'] },
});

/** Posts a SendEmail from another process, so it arrives while this thread is busy. */
function postFromAnotherProcess(url: string) {
  const curl = spawn('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-X',
    'POST',
    '-H',
    'content-type: application/json',
    '--data',
    sendEmailBody,
    `${url}/v2/email/outbound-emails`,
  ]);
  return new Promise<number | null>((resolve) => curl.on('exit', resolve));
}

function stallThisThread(ms: number) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no event of this thread runs meanwhile
  }
}

/** Busy until `done()` holds, then one millisecond more; false if it did not within 30 s (a hang guard). */
function stallThisThreadUntil(done: () => boolean): boolean {
  const giveUpAt = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > giveUpAt) return false;
  }
  stallThisThread(1);
  return true;
}

it('stamps a request that arrives while the test thread stalls with its arrival, off that thread', async () => {
  fake = await startFakeSes({ stampArrivalsOffThread: true });
  const startedAt = Date.now();
  const done = postFromAnotherProcess(fake.url);
  // The thread stalls until the request has arrived (the stamper counts it in memory this busy
  // thread can read), and a millisecond more: it arrived during the stall, however long curl took.
  const arrived = stallThisThreadUntil(() => fake.stampedArrivals() >= 1);
  const stallEndedAt = Date.now();
  expect(arrived).toBe(true);
  expect(await done).toBe(0);
  expect(fake.messages).toHaveLength(1);
  const [m] = fake.messages;
  // Stamped when it arrived, during the stall; accepted by the stalled thread after it.
  expect(m.arrivedAt).toBeGreaterThanOrEqual(startedAt);
  expect(m.arrivedAt).toBeLessThan(stallEndedAt);
  expect(m.at).toBeGreaterThanOrEqual(stallEndedAt);
});

it('passes the real SDK through the stamper; without the option, stamps arrivals on the test thread', async () => {
  fake = await startFakeSes({ stampArrivalsOffThread: true });
  const client = createSesClient({ SES_ENDPOINT: fake.url }, 'eu-west-1');
  try {
    const out = await client.send(
      new SendEmailCommand({
        Content: { Raw: { Data: Buffer.from('Subject: hi\r\n\r\nbody') } },
        Destination: { ToAddresses: ['b@example.com'] },
      }),
    );
    expect(out.MessageId).toBe(fake.messages[0].messageId);
    expect(fake.messages[0].region).toBe('eu-west-1');
  } finally {
    client.destroy();
  }
  await fake.close();

  fake = await startFakeSes();
  const done = postFromAnotherProcess(fake.url);
  stallThisThread(1500);
  const stallEndedAt = Date.now();
  expect(await done).toBe(0);
  expect(fake.messages[0].arrivedAt).toBeGreaterThanOrEqual(stallEndedAt);
});
