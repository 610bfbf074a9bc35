import { randomUUID } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { sesEventJobOptions, type SesEventJob } from './process-ses-event';
import { bareAddress } from '../emails/address';
import { normaliseAddress } from '../emails/address';

// The local SES emulator accepts mail but publishes no events. In development the simulator
// makes up the events SES would publish for each accepted message, in SES's own event-publishing
// JSON, and queues them as the SNS intake does after its signature check, so the one processor
// (dedupe, status ranks, counters, suppression, webhooks) applies them. Like SES's mailbox
// simulator, some local parts choose the outcome, at simulator.amazonses.com or any other domain.
// Whether the simulator runs is decided once, in the configuration (Config.sesEventSimulator).

export type SimulatedOutcome = 'success' | 'bounce' | 'suppressionlist' | 'complaint' | 'ooto' | 'delay';

export const SES_SIMULATOR_DOMAIN = 'simulator.amazonses.com';

/** The test addresses, as `npm start` and docs/events.md list them. */
export const SIMULATOR_TEST_ADDRESSES: { localPart: SimulatedOutcome; events: string; result: string }[] = [
  { localPart: 'success', events: 'Send, Delivery', result: 'DELIVERED (any other address too)' },
  { localPart: 'bounce', events: 'Send, Bounce Permanent/General', result: 'BOUNCED, suppressed (HARD_BOUNCE), contact unsubscribed' },
  {
    localPart: 'suppressionlist',
    events: 'Send, Bounce Permanent/OnAccountSuppressionList',
    result: 'BOUNCED, suppressed (HARD_BOUNCE), contact unsubscribed',
  },
  {
    localPart: 'complaint',
    events: 'Send, Delivery, then Complaint (abuse)',
    result: 'COMPLAINED, suppressed (COMPLAINT), contact unsubscribed',
  },
  { localPart: 'ooto', events: 'Send, Delivery (an out-of-office auto-reply goes back to the sender)', result: 'DELIVERED' },
  { localPart: 'delay', events: 'Send, DeliveryDelay', result: 'DELIVERY_DELAYED' },
];

/** Topic recorded on simulated jobs; they enter after the SNS topic and signature checks. */
export const SIMULATOR_TOPIC = 'mailrail:ses-event-simulator';

const OUTCOMES = new Set<string>(SIMULATOR_TEST_ADDRESSES.map((a) => a.localPart));

/** `bounce@x`, `Bounce+label@x` and `"B" <bounce@x>` bounce; anything else is delivered. */
export function simulatedOutcome(address: string): SimulatedOutcome {
  const email = normaliseAddress(address);
  const at = email.lastIndexOf('@');
  const local = (at > 0 ? email.slice(0, at) : email).split('+')[0];
  return OUTCOMES.has(local) ? (local as SimulatedOutcome) : 'success';
}

/** What SES knows about an accepted message: its `mail` object is built from this. */
export interface SimulatedMessage {
  messageId: string;
  /** The From header as sent. */
  source: string;
  destination: { to: string[]; cc: string[]; bcc: string[] };
  /** Top-level MIME headers in order, as SES reports them. */
  headers: { name: string; value: string }[];
  subject: string;
  region: string;
  configurationSetName?: string;
  sentAt: Date;
}

export interface SimulatedEvent {
  eventType: 'Send' | 'Delivery' | 'Bounce' | 'Complaint' | 'DeliveryDelay' | 'Open' | 'Click';
  /** Milliseconds after the send. */
  delayMs: number;
  /** The SES event JSON, as SES publishes it to SNS (the SNS Message). */
  message: string;
}

const ACCOUNT_ID = '000000000000';
const REPORTING_MTA = 'a8-70.smtp-out.amazonses.com';
const USER_AGENT = 'Mozilla/5.0 (mailrail SES event simulator)';
const feedbackId = () => `0100${Date.now().toString(16)}-${randomUUID()}-000000`;
const domainOf = (address: string) => normaliseAddress(address).split('@')[1] ?? '';

function mailObject(m: SimulatedMessage) {
  const tags: Record<string, string[]> = {
    'ses:operation': ['SendEmail'],
    'ses:source-ip': ['127.0.0.1'],
    'ses:from-domain': [domainOf(m.source)],
    'ses:caller-identity': ['mailrail-local'],
  };
  if (m.configurationSetName) tags['ses:configuration-set'] = [m.configurationSetName];
  const messageIdHeader = m.headers.find((h) => h.name.toLowerCase() === 'message-id')?.value;
  return {
    timestamp: m.sentAt.toISOString(),
    source: m.source,
    sourceArn: `arn:aws:ses:${m.region}:${ACCOUNT_ID}:identity/${domainOf(m.source)}`,
    sendingAccountId: ACCOUNT_ID,
    messageId: m.messageId,
    destination: [...m.destination.to, ...m.destination.cc, ...m.destination.bcc],
    headersTruncated: false,
    headers: m.headers,
    commonHeaders: {
      from: [m.source],
      to: m.destination.to,
      ...(m.destination.cc.length ? { cc: m.destination.cc } : {}),
      ...(messageIdHeader ? { messageId: messageIdHeader } : {}),
      subject: m.subject,
    },
    tags,
  };
}

const at = (m: SimulatedMessage, delayMs: number) => new Date(m.sentAt.getTime() + delayMs).toISOString();

function event(
  m: SimulatedMessage,
  eventType: SimulatedEvent['eventType'],
  delayMs: number,
  detailKey: string,
  detail: object,
): SimulatedEvent {
  return { eventType, delayMs, message: JSON.stringify({ eventType, mail: mailObject(m), [detailKey]: detail }) };
}

/**
 * The events SES would publish for one accepted message: Send at once; after `delayMs` one
 * Delivery for the recipients that accept it, a Bounce per bouncing kind, a DeliveryDelay; a
 * Complaint after as long again. Only the message's own recipients are ever named.
 */
export function simulatedSendEvents(m: SimulatedMessage, delayMs: number): SimulatedEvent[] {
  // SES names recipients by bare address, as they were given (`"Ada" <Ada@x.org>` → `Ada@x.org`).
  const recipients = [...new Set([...m.destination.to, ...m.destination.cc, ...m.destination.bcc].map(bareAddress))];
  const byOutcome = (...outcomes: SimulatedOutcome[]) => recipients.filter((r) => outcomes.includes(simulatedOutcome(r)));
  const events: SimulatedEvent[] = [event(m, 'Send', 0, 'send', {})];

  const delivered = byOutcome('success', 'ooto', 'complaint');
  if (delivered.length) {
    events.push(
      event(m, 'Delivery', delayMs, 'delivery', {
        timestamp: at(m, delayMs),
        processingTimeMillis: delayMs,
        recipients: delivered,
        smtpResponse: '250 2.6.0 Message received',
        reportingMTA: REPORTING_MTA,
        remoteMtaIp: '127.0.0.1',
      }),
    );
  }
  const bounce = (emails: string[], bounceSubType: string, status: string, diagnosticCode: string) =>
    event(m, 'Bounce', delayMs, 'bounce', {
      bounceType: 'Permanent',
      bounceSubType,
      bouncedRecipients: emails.map((emailAddress) => ({ emailAddress, action: 'failed', status, diagnosticCode })),
      timestamp: at(m, delayMs),
      feedbackId: feedbackId(),
      reportingMTA: `dns; ${REPORTING_MTA}`,
    });
  const bounced = byOutcome('bounce');
  if (bounced.length) events.push(bounce(bounced, 'General', '5.1.1', 'smtp; 550 5.1.1 user unknown'));
  const onSuppressionList = byOutcome('suppressionlist');
  if (onSuppressionList.length) {
    events.push(
      bounce(
        onSuppressionList,
        'OnAccountSuppressionList',
        '5.1.1',
        'Amazon SES did not send the message to this address because it is on the suppression list for your account.',
      ),
    );
  }
  const delayed = byOutcome('delay');
  if (delayed.length) {
    events.push(
      event(m, 'DeliveryDelay', delayMs, 'deliveryDelay', {
        timestamp: at(m, delayMs),
        delayType: 'TransientCommunicationFailure',
        expirationTime: at(m, 24 * 3600_000),
        delayedRecipients: delayed.map((emailAddress) => ({
          emailAddress,
          status: '4.4.1',
          diagnosticCode: 'smtp; 421 4.4.1 Unable to connect to the remote host',
        })),
        reportingMTA: REPORTING_MTA,
      }),
    );
  }
  const complained = byOutcome('complaint');
  if (complained.length) {
    events.push(
      event(m, 'Complaint', 2 * delayMs, 'complaint', {
        complainedRecipients: complained.map((emailAddress) => ({ emailAddress })),
        timestamp: at(m, 2 * delayMs),
        feedbackId: feedbackId(),
        userAgent: 'Amazon SES Mailbox Simulator',
        complaintFeedbackType: 'abuse',
        arrivalDate: at(m, 2 * delayMs),
      }),
    );
  }
  return events;
}

/** An Open or Click of an email sent before (the development CLI's `simulate open|click`). */
export function simulatedEngagementEvent(m: SimulatedMessage, kind: 'open' | 'click', now: Date, link?: string): SimulatedEvent {
  const detail = { ipAddress: '127.0.0.1', timestamp: now.toISOString(), userAgent: USER_AGENT };
  if (kind === 'open') return event(m, 'Open', 0, 'open', detail);
  return event(m, 'Click', 0, 'click', { ...detail, link: link ?? '', linkTags: {} });
}

/** A `queueNames.sesEvents` job, as the SNS intake adds it, for one simulated event. */
export function simulatedSesEventJob(e: SimulatedEvent): { name: string; data: SesEventJob; opts: JobsOptions } {
  const snsMessageId = randomUUID();
  return {
    name: e.eventType,
    data: { snsMessageId, topicArn: SIMULATOR_TOPIC, message: e.message },
    opts: { ...sesEventJobOptions, jobId: snsMessageId, ...(e.delayMs > 0 ? { delay: e.delayMs } : {}) },
  };
}

/** Top-level headers of a raw MIME message (unfolded), as SES lists them in `mail.headers`. */
export function mimeHeaders(raw: Buffer): { name: string; value: string }[] {
  const text = raw.subarray(0, 256 * 1024).toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  const headers: { name: string; value: string }[] = [];
  for (const line of (end >= 0 ? text.slice(0, end) : text).split('\r\n')) {
    const last = headers[headers.length - 1];
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      last.value += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0) headers.push({ name: line.slice(0, colon), value: line.slice(colon + 1).trim() });
  }
  return headers;
}

/** RFC 2047 encoded words (UTF-8, B or Q) decoded, as SES gives `commonHeaders.subject`. */
export function decodeEncodedWords(value: string): string {
  return value.replace(/\?=\s+=\?/g, '?==?').replace(/=\?utf-8\?([bq])\?([^?]*)\?=/gi, (_, enc: string, text: string) =>
    enc.toLowerCase() === 'b'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text.replace(/_/g, ' ').replace(/=([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8'),
  );
}

/** The `mail` facts of an email already sent, for events simulated after the fact. */
export function simulatedMessageOfEmail(
  email: {
    id: string;
    from: string;
    to: string[];
    cc: string[];
    bcc: string[];
    subject: string;
    sesEmailId: string;
    sentAt: Date | null;
    createdAt: Date;
  },
  region: string,
): SimulatedMessage {
  return {
    messageId: email.sesEmailId,
    source: email.from,
    destination: { to: email.to, cc: email.cc, bcc: email.bcc },
    // What SES would echo of ours: enough to match the email by its id header as well.
    headers: [
      { name: 'From', value: email.from },
      { name: 'To', value: email.to.join(', ') },
      { name: 'Subject', value: email.subject },
      { name: 'X-Usesend-Email-ID', value: email.id },
    ],
    subject: email.subject,
    region,
    sentAt: email.sentAt ?? email.createdAt,
  };
}

/** First http(s) link of an HTML body, the link a simulated click follows by default. */
export function firstLink(html: string | null): string | null {
  const m = /href\s*=\s*["'](https?:\/\/[^"'\s]{1,2000})["']/i.exec(html ?? '');
  return m ? m[1] : null;
}
