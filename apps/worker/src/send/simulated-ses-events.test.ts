import { createLogger } from '@mailrail/platform/log/logger';
import { parseSesEvent } from '@mailrail/domain/ses-events/ses-event';
import type { SesSender } from './ses-sender';
import { withSimulatedSesEvents } from './simulated-ses-events';

const raw = Buffer.from(
  'From: Shop <orders@shop.example.com>\r\nTo: ada@example.org\r\nSubject: Hi\r\nX-Usesend-Email-ID: em_1\r\n\r\nbody',
);
const email = { region: 'us-east-1', raw, destination: { to: ['ada@example.org'], cc: [], bcc: ['bounce@example.com'] } };

function fakeSender(): SesSender & { sent: (typeof email)[] } {
  const sent: (typeof email)[] = [];
  return {
    sent,
    sendRawEmail: async (e) => {
      sent.push(e as typeof email);
      return { sent: true, messageId: `local-${sent.length}` };
    },
    getMaxSendRate: async () => null,
    close: () => undefined,
  };
}

it('queues the SES events of an accepted message, naming its envelope recipients and our email id header', async () => {
  const added: { name: string; data: { message: string }; opts: { delay?: number } }[][] = [];
  const ses = withSimulatedSesEvents(fakeSender(), {
    sesEventsQueue: { addBulk: async (jobs) => (added.push(jobs as never), []) },
    delayMs: 500,
    log: createLogger('silent', 'test'),
  });
  expect(await ses.sendRawEmail(email)).toEqual({ sent: true, messageId: 'local-1' });
  const jobs = added[0];
  expect(jobs.map((j) => [j.name, j.opts.delay])).toEqual([
    ['Send', undefined],
    ['Delivery', 500],
    ['Bounce', 500],
  ]);
  const bounce = parseSesEvent(jobs[2].data.message);
  expect(bounce.ok && bounce.event).toMatchObject({
    sesMessageId: 'local-1',
    headerEmailId: 'em_1',
    suppress: { emails: ['bounce@example.com'], reason: 'HARD_BOUNCE' },
  });
});

it('a failure to queue the events never fails the send: the worker would send the message again', async () => {
  const inner = fakeSender();
  const ses = withSimulatedSesEvents(inner, {
    sesEventsQueue: { addBulk: async () => Promise.reject(new Error('Redis is gone')) },
    delayMs: 500,
    log: createLogger('silent', 'test'),
  });
  await expect(ses.sendRawEmail(email)).resolves.toEqual({ sent: true, messageId: 'local-1' });
  expect(inner.sent).toHaveLength(1);
});
