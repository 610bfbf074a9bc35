import {
  decodeEncodedWords,
  mimeHeaders,
  simulatedOutcome,
  simulatedSendEvents,
  simulatedSesEventJob,
  SIMULATOR_TOPIC,
  type SimulatedMessage,
} from './event-simulator';
import { parseSesEvent } from './ses-event';

const sentAt = new Date('2026-11-23T10:00:00.000Z');
const message = (to: string[], extra: Partial<SimulatedMessage> = {}): SimulatedMessage => ({
  messageId: 'local-msg-1',
  source: 'Shop <orders@shop.example.com>',
  destination: { to, cc: [], bcc: [] },
  headers: [
    { name: 'From', value: 'Shop <orders@shop.example.com>' },
    { name: 'Message-ID', value: '<abc@shop.example.com>' },
    { name: 'X-Usesend-Email-ID', value: 'em_1' },
  ],
  subject: 'Hello',
  region: 'us-east-1',
  sentAt,
  ...extra,
});
const parsed = (m: string) => {
  const p = parseSesEvent(m);
  if (!p.ok) throw new Error(p.reason);
  return p.event;
};

describe('test addresses', () => {
  it.each([
    ['bounce@simulator.amazonses.com', 'bounce'],
    ['bounce@example.com', 'bounce'],
    ['BOUNCE+label@Example.com', 'bounce'],
    ['"Ada" <complaint@example.org>', 'complaint'],
    ['suppressionlist@simulator.amazonses.com', 'suppressionlist'],
    ['ooto@x.test', 'ooto'],
    ['delay@x.test', 'delay'],
    ['success@simulator.amazonses.com', 'success'],
    ['bounces@example.com', 'success'],
    ['ada@bounce.example.com', 'success'],
  ])('%s → %s', (address, outcome) => {
    expect(simulatedOutcome(address)).toBe(outcome);
  });
});

describe('simulated SES events', () => {
  it('an ordinary address: Send at once, Delivery after the delay, in SES event-publishing JSON', () => {
    const events = simulatedSendEvents(message(['ada@example.org']), 1500);
    expect(events.map((e) => [e.eventType, e.delayMs])).toEqual([
      ['Send', 0],
      ['Delivery', 1500],
    ]);
    const delivery = JSON.parse(events[1].message);
    expect(delivery).toMatchObject({
      eventType: 'Delivery',
      mail: {
        timestamp: sentAt.toISOString(),
        source: 'Shop <orders@shop.example.com>',
        messageId: 'local-msg-1',
        destination: ['ada@example.org'],
        headersTruncated: false,
        commonHeaders: {
          from: ['Shop <orders@shop.example.com>'],
          to: ['ada@example.org'],
          messageId: '<abc@shop.example.com>',
          subject: 'Hello',
        },
        tags: { 'ses:from-domain': ['shop.example.com'] },
      },
      delivery: {
        timestamp: '2026-11-23T10:00:01.500Z',
        processingTimeMillis: 1500,
        recipients: ['ada@example.org'],
        smtpResponse: '250 2.6.0 Message received',
      },
    });
    expect(JSON.parse(events[0].message)).toMatchObject({ eventType: 'Send', send: {} });
    const e = parsed(events[1].message);
    expect(e).toMatchObject({ type: 'Delivery', status: 'DELIVERED', sesMessageId: 'local-msg-1', headerEmailId: 'em_1', suppress: null });
    expect(e.occurredAt).toEqual(new Date('2026-11-23T10:00:01.500Z'));
  });

  it("each test address gets what SES's mailbox simulator gives it, naming only its own recipients", () => {
    const to = [
      'bounce@example.com',
      'suppressionlist@simulator.amazonses.com',
      'complaint@x.test',
      'ooto@x.test',
      'delay@x.test',
      'ada@example.org',
    ];
    const events = simulatedSendEvents(message(to, { destination: { to: to.slice(0, 3), cc: to.slice(3, 5), bcc: to.slice(5) } }), 1000);
    const byType = events.map((e) => ({ ...parsed(e.message), delayMs: e.delayMs, raw: JSON.parse(e.message) }));
    expect(byType.map((e) => [e.type, e.delayMs])).toEqual([
      ['Send', 0],
      ['Delivery', 1000],
      ['Bounce', 1000],
      ['Bounce', 1000],
      ['DeliveryDelay', 1000],
      ['Complaint', 2000],
    ]);
    const [, delivery, general, onList, delay, complaint] = byType;
    expect(delivery.raw.delivery.recipients).toEqual(['complaint@x.test', 'ooto@x.test', 'ada@example.org']);
    expect(general.raw.bounce).toMatchObject({
      bounceType: 'Permanent',
      bounceSubType: 'General',
      bouncedRecipients: [
        { emailAddress: 'bounce@example.com', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
      ],
    });
    expect(general.suppress).toEqual({ emails: ['bounce@example.com'], reason: 'HARD_BOUNCE' });
    expect(onList.raw.bounce).toMatchObject({ bounceType: 'Permanent', bounceSubType: 'OnAccountSuppressionList' });
    expect(onList.suppress).toEqual({ emails: ['suppressionlist@simulator.amazonses.com'], reason: 'HARD_BOUNCE' });
    expect(delay).toMatchObject({ status: 'DELIVERY_DELAYED', suppress: null });
    expect(delay.raw.deliveryDelay).toMatchObject({
      delayType: 'TransientCommunicationFailure',
      delayedRecipients: [{ emailAddress: 'delay@x.test' }],
    });
    expect(complaint.raw.complaint).toMatchObject({
      complaintFeedbackType: 'abuse',
      complainedRecipients: [{ emailAddress: 'complaint@x.test' }],
    });
    expect(complaint.suppress).toEqual({ emails: ['complaint@x.test'], reason: 'COMPLAINT' });
    expect(complaint.occurredAt).toEqual(new Date(sentAt.getTime() + 2000));
    // bcc recipients are SES destinations but never in commonHeaders.
    expect(delivery.raw.mail.destination).toEqual(to);
    expect(delivery.raw.mail.commonHeaders).toMatchObject({ to: to.slice(0, 3), cc: to.slice(3, 5) });
  });

  it('names recipients by bare address, as SES does', () => {
    const [, delivery, bounce] = simulatedSendEvents(message(['"Ada" <Ada@Example.org>', 'Bounce <bounce@x.test>']), 10).map((e) =>
      JSON.parse(e.message),
    );
    expect(delivery.delivery.recipients).toEqual(['Ada@Example.org']);
    expect(bounce.bounce.bouncedRecipients.map((r: { emailAddress: string }) => r.emailAddress)).toEqual(['bounce@x.test']);
  });

  it('queues each event as the SNS intake does: a fresh message id as job id, the delay, no topic needed', () => {
    const [send, delivery] = simulatedSendEvents(message(['ada@example.org']), 700).map(simulatedSesEventJob);
    expect(send.data.topicArn).toBe(SIMULATOR_TOPIC);
    expect(send.opts.jobId).toBe(send.data.snsMessageId);
    expect(send.data.snsMessageId).toMatch(/^[A-Za-z0-9-]{1,100}$/);
    expect(send.opts.delay).toBeUndefined();
    expect(delivery.opts).toMatchObject({ delay: 700, attempts: 6 });
    expect(delivery.data.snsMessageId).not.toBe(send.data.snsMessageId);
  });
});

describe('reading the sent MIME', () => {
  it('lists top-level headers unfolded and decodes an encoded subject', () => {
    const raw = Buffer.from(
      'From: a@b.c\r\nSubject: =?UTF-8?B?SMOpbGxv?=\r\n =?UTF-8?Q?_w=C3=B6rld?=\r\nX-Usesend-Email-ID: em_9\r\n\r\nX-Not-A-Header: body\r\n',
    );
    const headers = mimeHeaders(raw);
    expect(headers.map((h) => h.name)).toEqual(['From', 'Subject', 'X-Usesend-Email-ID']);
    expect(decodeEncodedWords(headers[1].value)).toBe('Héllo wörld');
  });
});
