import type { EmailStatus } from '@mailrail/platform/db/generated/enums';
import { parseSesEvent } from '../ses-events/ses-event';
import {
  COMPLAINT_FEEDBACK_TYPES,
  SES_BOUNCE_KINDS,
  SES_DELAY_TYPES,
  explainBounce,
  explainComplaint,
  explainDelay,
  explainEvent,
  explainSmtpStatus,
  explainSuppression,
} from './explanations';

// What SES documents (developer guide, "Contents of event data" / "notification contents"),
// written out here rather than read from the module: a type missing from the module fails.
const SES_BOUNCES = [
  'Undetermined/Undetermined',
  'Permanent/General',
  'Permanent/NoEmail',
  'Permanent/Suppressed',
  'Permanent/OnAccountSuppressionList',
  'Permanent/UnsubscribedRecipient',
  'Transient/General',
  'Transient/MailboxFull',
  'Transient/MessageTooLarge',
  'Transient/ContentRejected',
  'Transient/AttachmentRejected',
];
const COMPLAINT_TYPES = ['abuse', 'auth-failure', 'fraud', 'not-spam', 'other', 'virus'];
const DELAY_TYPES = [
  'InternalFailure',
  'General',
  'MailboxFull',
  'SpamDetected',
  'RecipientServerError',
  'IPFailure',
  'TransientCommunicationFailure',
  'BYOIPHostNameLookupUnavailable',
  'Undetermined',
  'SendingDeadlineExceeded',
];

const GENERIC_BOUNCE = explainBounce('Nonsense', 'Nonsense');

/** What mailrail's SES event handling really does with the event: suppress its recipients or not. */
function suppresses(eventType: string, detail: Record<string, unknown>): boolean {
  const parsed = parseSesEvent(JSON.stringify({ eventType, mail: { messageId: 'm-1' }, ...detail }));
  if (!parsed.ok) throw new Error('not an SES event');
  return parsed.event.suppress !== null;
}

describe('bounces', () => {
  it('every bounce type and subtype SES documents has its own sentence, and nothing else is listed', () => {
    expect([...SES_BOUNCE_KINDS].sort()).toEqual([...SES_BOUNCES].sort());
    const sentences = new Set<string>();
    for (const kind of SES_BOUNCES) {
      const [type, sub] = kind.split('/');
      const e = explainBounce(type, sub);
      expect(e.sentence).not.toBe(GENERIC_BOUNCE.sentence);
      expect(e.code).toBe(`${type} / ${sub}`);
      sentences.add(e.sentence);
    }
    expect(sentences.size).toBe(SES_BOUNCES.length);
  });

  it("says 'suppressed' exactly when mailrail's event handling suppresses the bounced address", () => {
    for (const kind of SES_BOUNCES) {
      const [bounceType, bounceSubType] = kind.split('/');
      const handled = suppresses('Bounce', {
        bounce: { bounceType, bounceSubType, bouncedRecipients: [{ emailAddress: 'ada@example.org' }] },
      });
      expect({ kind, suppressed: explainBounce(bounceType, bounceSubType).action === 'suppressed' }).toEqual({ kind, suppressed: handled });
    }
  });

  it('an unknown subtype falls back to its type, an unknown type to a generic sentence', () => {
    const permanent = explainBounce('Permanent', 'SomethingNew');
    expect(permanent).toMatchObject({ title: 'Hard bounce', action: 'suppressed', code: 'Permanent / SomethingNew' });
    expect(explainBounce('Transient', 'SomethingNew')).toMatchObject({ title: 'Soft bounce', action: 'nothing' });
    expect(GENERIC_BOUNCE).toMatchObject({ title: 'Bounced', action: 'nothing' });
    expect(explainBounce(undefined, 42)).toMatchObject({ title: 'Bounced', code: null });
  });

  it("adds the receiving server's status code, explained", () => {
    const e = explainBounce('Permanent', 'General', 'smtp; 550 5.1.1 user unknown');
    expect(e.sentence).toContain('The server said 5.1.1: the mailbox does not exist');
    expect(e.code).toBe('Permanent / General · 5.1.1');
  });
});

describe('complaints', () => {
  it('every feedback type has its own sentence; a complaint without a type gets the common one', () => {
    expect([...COMPLAINT_FEEDBACK_TYPES].sort()).toEqual([...COMPLAINT_TYPES].sort());
    const none = explainComplaint(undefined);
    const sentences = new Set(COMPLAINT_TYPES.map((t) => explainComplaint(t).sentence));
    expect(sentences.size).toBe(COMPLAINT_TYPES.length);
    expect(sentences.has(none.sentence)).toBe(false);
    expect(none).toMatchObject({ title: 'Marked as spam', code: 'Complaint' });
    expect(explainComplaint('brand-new-type')).toMatchObject({ title: 'Marked as spam', code: 'Complaint / brand-new-type' });
  });

  it("says 'suppressed' for every type, as mailrail's event handling does", () => {
    for (const type of [...COMPLAINT_TYPES, undefined]) {
      const handled = suppresses('Complaint', {
        complaint: { complaintFeedbackType: type, complainedRecipients: [{ emailAddress: 'ada@example.org' }] },
      });
      expect(handled).toBe(true);
      expect(explainComplaint(type).action).toBe('suppressed');
    }
    expect(explainComplaint(undefined, 'OnAccountSuppressionList').title).toContain('suppression list');
  });
});

describe('delivery delays', () => {
  it('every delay type has its own sentence; SES retries all but a passed deadline; an unknown one is generic', () => {
    expect([...SES_DELAY_TYPES].sort()).toEqual([...DELAY_TYPES].sort());
    const generic = explainDelay('SomethingNew');
    for (const type of DELAY_TYPES) {
      const e = explainDelay(type);
      expect(e.code).toBe(`DeliveryDelay / ${type}`);
      expect(e.action).toBe(type === 'SendingDeadlineExceeded' ? 'nothing' : 'ses-retrying');
      if (type !== 'General' && type !== 'Undetermined') expect(e.sentence).not.toBe(generic.sentence);
      expect(suppresses('DeliveryDelay', { deliveryDelay: { delayType: type, delayedRecipients: [{ emailAddress: 'a@b.org' }] } })).toBe(
        false,
      );
    }
    expect(generic).toMatchObject({ title: 'Delayed', action: 'ses-retrying' });
  });
});

describe('SMTP enhanced status codes', () => {
  it.each([
    ['smtp; 550 5.1.1 user unknown', '5.1.1', /does not exist/],
    ['smtp; 550 5.1.2 bad destination', '5.1.2', /domain/],
    ['550 5.1.10 RESOLVER.ADR.RecipientNotFound', '5.1.10', /null MX/],
    ['550 5.2.1 mailbox disabled', '5.2.1', /disabled/],
    ['552 5.2.2 mailbox full', '5.2.2', /full/],
    ['552 5.3.4 message too big', '5.3.4', /larger/],
    ['550 5.4.1 Recipient address rejected: Access denied', '5.4.1', /Microsoft 365/],
    ['550 5.4.4 unable to route', '5.4.4', /no mail server/],
    ['550 5.7.1 blocked by policy', '5.7.1', /policy/],
    ['550-5.7.26 unauthenticated email', '5.7.26', /SPF, DKIM, DMARC/],
    ['452 4.2.2 over quota', '4.2.2', /temporarily, the mailbox is full for now/],
    ['4.4.7 delivery time expired', '4.4.7', /too long/],
    ['421 4.7.0 try again later', '4.7.0', /greylisting/],
    ['550 5.6.9 something odd', '5.6.9', /content of the message/],
  ])('%s', (diagnostic, code, meaning) => {
    const e = explainSmtpStatus(diagnostic)!;
    expect(e.code).toBe(code);
    expect(e.sentence).toMatch(meaning);
    expect(e.permanent).toBe(code.startsWith('5'));
  });

  it('finds nothing where there is no code, and looks only at the start of a long text', () => {
    expect(explainSmtpStatus('smtp; 550 user unknown')).toBeNull();
    expect(explainSmtpStatus(undefined)).toBeNull();
    expect(explainSmtpStatus('x'.repeat(10_000) + ' 5.1.1')).toBeNull();
    // A pathological input is read in one pass over the capped text.
    expect(explainSmtpStatus('5.'.repeat(100_000))).toBeNull();
    expect(explainSmtpStatus('1.2.3.4 and 5.1.1')!.code).toBe('5.1.1');
  });
});

describe('events of the timeline', () => {
  it('explains every status mailrail or SES records but the waiting ones', () => {
    const statuses: EmailStatus[] = [
      'SENT',
      'DELIVERY_DELAYED',
      'BOUNCED',
      'REJECTED',
      'RENDERING_FAILURE',
      'DELIVERED',
      'OPENED',
      'CLICKED',
      'COMPLAINED',
      'FAILED',
      'CANCELLED',
      'SUPPRESSED',
    ];
    for (const s of statuses) expect(explainEvent(s, {})?.sentence).toEqual(expect.any(String));
    expect(explainEvent('QUEUED', null)).toBeNull();
    expect(explainEvent('SCHEDULED', null)).toBeNull();
  });

  it("a bounce naming several recipients explains the given address's diagnostic", () => {
    const data = {
      bounceType: 'Permanent',
      bounceSubType: 'General',
      bouncedRecipients: [
        { emailAddress: 'a@x.org', diagnosticCode: 'smtp; 550 5.1.1 unknown' },
        { emailAddress: 'B@x.org', diagnosticCode: 'smtp; 552 5.2.2 full' },
      ],
    };
    expect(explainEvent('BOUNCED', data, 'b@x.org')!.code).toBe('Permanent / General · 5.2.2');
    expect(explainEvent('BOUNCED', data)!.code).toBe('Permanent / General · 5.1.1');
  });

  it('a click names its link, a delay its type, a suppression its reason', () => {
    expect(explainEvent('CLICKED', { link: 'https://acme.example/order' })!.sentence).toContain('https://acme.example/order');
    expect(explainEvent('DELIVERY_DELAYED', { delayType: 'MailboxFull' })!.title).toBe('Delayed: the mailbox is full');
    expect(explainSuppression('HARD_BOUNCE')).toMatchObject({ action: 'not-sent', code: 'HARD_BOUNCE' });
    expect(explainSuppression('SOMETHING')).toMatchObject({ title: 'Suppressed' });
  });
});
