import type { EmailStatus, SuppressionReason } from '@mailrail/platform/db/generated/enums';

// "Why didn't this arrive?" (issue 42, docs/deliverability.md): every SES bounce type and subtype,
// complaint feedback type, delivery-delay type and common SMTP status code in one plain sentence
// for someone who never read SES's documentation, with what mailrail did about it. The actions
// state what the code does: a permanent bounce or any complaint suppresses the recipient and
// unsubscribes it from every contact book of the team (ses-events/process-ses-event.ts,
// suppressRecipients); nothing else does. Pure, with no imports but types: the API and the
// dashboard (email page, address page) read the same sentences.

/** What mailrail did about an outcome. */
export type MailrailAction =
  /** Put on the team's suppression list and unsubscribed from every contact book. */
  | 'suppressed'
  /** SES is still trying; mailrail waits for its next event. */
  | 'ses-retrying'
  /** mailrail did not send it (suppressed, cancelled, failed before SES took it). */
  | 'not-sent'
  /** Nothing: the next email to the address is sent as usual. */
  | 'nothing';

export interface Explanation {
  /** A few words: "Hard bounce: the address does not exist". */
  title: string;
  /** What happened, in a plain sentence. */
  sentence: string;
  action: MailrailAction;
  /** What mailrail did, in a plain sentence. */
  actionSentence: string;
  /** SES's or the receiving server's own words for it, for a search or a support ticket ("Permanent / NoEmail", "5.1.1"). */
  code: string | null;
}

const ACTION_SENTENCES: Record<MailrailAction, string> = {
  suppressed:
    'mailrail added the address to the suppression list and unsubscribed it in every contact book of the team: later emails to it are not sent until you remove it from the list.',
  'ses-retrying': 'Nothing yet: SES keeps trying to deliver it and mailrail records what SES reports next.',
  'not-sent': 'mailrail did not hand this message to SES.',
  nothing: 'Nothing: the address is not suppressed, so the next email to it is sent as usual.',
};

const explanation = (
  title: string,
  sentence: string,
  action: MailrailAction,
  code: string | null,
  actionSentence?: string,
): Explanation => ({
  title,
  sentence,
  action,
  actionSentence: actionSentence ?? ACTION_SENTENCES[action],
  code,
});

// ------------------------------------------------------------------ bounces

/** SES's bounce types and subtypes (SES developer guide, "Bounce types"), each in plain words. */
export const BOUNCE_SENTENCES = {
  Undetermined: {
    Undetermined: [
      'Bounced for an unknown reason',
      'The receiving server sent the message back, and SES could not tell why or whether it would happen again.',
    ],
  },
  Permanent: {
    General: [
      'Hard bounce',
      'The receiving server refused the address for good. Common causes: the mailbox was closed, or the address was mistyped.',
    ],
    NoEmail: ['Hard bounce: the address does not exist', 'The receiving server says there is no mailbox with this address.'],
    Suppressed: [
      "Not delivered: on SES's global suppression list",
      'SES did not try to deliver it, because this address bounced hard for many senders recently.',
    ],
    OnAccountSuppressionList: [
      "Not delivered: on your SES account's suppression list",
      "SES did not try to deliver it, because the address is on the AWS account's own suppression list (it bounced or complained before, maybe through another tool on the same account). It does not count towards the bounce rate.",
    ],
    UnsubscribedRecipient: [
      'Not delivered: the recipient unsubscribed',
      "SES did not deliver it, because the recipient unsubscribed from this kind of email through SES's subscription management.",
    ],
  },
  Transient: {
    General: [
      'Soft bounce',
      'The receiving server could not take the message this time (it may be busy or have an issue of its own, or answered with an automatic reply). A later email may arrive.',
    ],
    MailboxFull: ['Soft bounce: the mailbox is full', "The recipient's mailbox is full. Once they make room, a later email may arrive."],
    MessageTooLarge: [
      'Soft bounce: the message is too large',
      'The receiving server refused the message because of its size. Smaller attachments or images may help.',
    ],
    ContentRejected: [
      'Soft bounce: the content was refused',
      "The receiving server refused the message because of what it contains (a spam or policy filter). Look at the message's links, wording and attachments.",
    ],
    AttachmentRejected: [
      'Soft bounce: an attachment was refused',
      'The receiving server does not accept one of the attachments (its type or size). Send a link instead, or another file type.',
    ],
  },
} as const satisfies Record<string, Record<string, readonly [string, string]>>;

/** Every bounce type/subtype SES documents, as "Type/SubType" (the coverage test walks it). */
export const SES_BOUNCE_KINDS = Object.entries(BOUNCE_SENTENCES).flatMap(([type, subs]) =>
  Object.keys(subs).map((sub) => `${type}/${sub}`),
);

const BOUNCE_TYPE_FALLBACK: Record<string, readonly [string, string]> = {
  Permanent: ['Hard bounce', 'The receiving server refused the address for good.'],
  Transient: ['Soft bounce', 'The receiving server could not take the message this time. A later email may arrive.'],
};

/**
 * A bounce, from SES's bounceType, bounceSubType and the recipient's diagnostic code. Only a
 * Permanent bounce suppresses (ses-event.ts: `hardBounce`); a transient or undetermined one has
 * already been retried by SES, which has given up on this message, and leaves the address alone.
 */
export function explainBounce(bounceType: unknown, bounceSubType: unknown, diagnosticCode?: unknown): Explanation {
  const type = typeof bounceType === 'string' ? bounceType : '';
  const sub = typeof bounceSubType === 'string' ? bounceSubType : '';
  const known = (BOUNCE_SENTENCES as Record<string, Record<string, readonly [string, string]>>)[type]?.[sub];
  const [title, sentence] = known ??
    BOUNCE_TYPE_FALLBACK[type] ?? ['Bounced', 'The message came back undelivered, and SES did not say how lasting the problem is.'];
  const smtp = explainSmtpStatus(diagnosticCode);
  const code = [type && sub ? `${type} / ${sub}` : type || null, smtp?.code].filter(Boolean).join(' · ') || null;
  return explanation(
    title,
    smtp ? `${sentence} The server said ${smtp.code}: ${smtp.sentence}` : sentence,
    type === 'Permanent' ? 'suppressed' : 'nothing',
    code,
  );
}

// ------------------------------------------------------------------ complaints

/** The complaint feedback types (RFC 5965's ARF types, as SES passes them on). */
export const COMPLAINT_SENTENCES = {
  abuse: ['Marked as spam', 'The recipient reported the message as spam to their mail provider.'],
  'auth-failure': [
    'Reported as failing authentication',
    "The recipient's provider reported that the message failed its sender checks (SPF, DKIM or DMARC). Check the domain's DNS records.",
  ],
  fraud: ['Reported as fraud', 'The recipient or their provider reported the message as fraud or phishing.'],
  'not-spam': [
    'Reported as not spam',
    "The recipient's provider reported the message as not spam (for example, it was moved out of the spam folder). SES still passes it on as a complaint.",
  ],
  other: ['Complaint', "The recipient's provider reported a complaint about the message without saying which kind."],
  virus: ['Reported as carrying a virus', "The recipient's provider reported that the message carried a virus."],
} as const satisfies Record<string, readonly [string, string]>;

export const COMPLAINT_FEEDBACK_TYPES = Object.keys(COMPLAINT_SENTENCES);

/**
 * A complaint. Every complaint SES passes on suppresses its recipients (ses-event.ts), whatever its
 * feedback type, "not-spam" included, and SES sends most complaints without a type at all.
 */
export function explainComplaint(feedbackType: unknown, complaintSubType?: unknown): Explanation {
  if (complaintSubType === 'OnAccountSuppressionList')
    return explanation(
      "Not delivered: on your SES account's suppression list",
      "SES did not send it, because the address is on the AWS account's own suppression list after an earlier complaint.",
      'suppressed',
      'Complaint / OnAccountSuppressionList',
    );
  const type = typeof feedbackType === 'string' ? feedbackType : '';
  const known = (COMPLAINT_SENTENCES as Record<string, readonly [string, string]>)[type];
  const [title, sentence] = known ?? [
    'Marked as spam',
    'The recipient told their mail provider that they do not want this email (most providers report a complaint without saying more).',
  ];
  return explanation(title, sentence, 'suppressed', type ? `Complaint / ${type}` : 'Complaint');
}

// ------------------------------------------------------------------ delivery delays

/** SES's DeliveryDelay delayType values (SES developer guide, "DeliveryDelay object"). */
export const DELAY_SENTENCES = {
  InternalFailure: ['Delayed: a problem inside SES', 'An internal problem at SES is holding the message up.'],
  General: ['Delayed', 'The message could not be delivered yet, for a reason SES did not name.'],
  MailboxFull: ['Delayed: the mailbox is full', "The recipient's mailbox is full for now."],
  SpamDetected: [
    'Delayed: held as possible spam',
    'The receiving server is holding the message back because it looks like spam to it (many such messages came from your account).',
  ],
  RecipientServerError: [
    "Delayed: the recipient's server has a problem",
    "The recipient's mail server has a temporary problem and cannot take mail right now.",
  ],
  IPFailure: [
    'Delayed: the sending IP address is blocked',
    "The receiving server is blocking or throttling the IP address the message is sent from (often a blocklist, or SES's shared address being limited).",
  ],
  TransientCommunicationFailure: [
    "Delayed: could not talk to the recipient's server",
    "SES could not complete the conversation with the recipient's mail server this time.",
  ],
  BYOIPHostNameLookupUnavailable: [
    'Delayed: the sending IP address has no host name',
    "SES could not look up the host name of your own IP addresses (bring-your-own-IP), which the recipient's server needs.",
  ],
  Undetermined: ['Delayed', 'SES could not tell why the message is delayed.'],
  SendingDeadlineExceeded: [
    'Delayed past the sending deadline',
    'The message could not be delivered within the maximum delivery time set for it, and SES stops trying.',
  ],
} as const satisfies Record<string, readonly [string, string]>;

export const SES_DELAY_TYPES = Object.keys(DELAY_SENTENCES);

/** A delivery delay: SES retries the message (for up to its maximum delivery time) by itself. */
export function explainDelay(delayType: unknown, diagnosticCode?: unknown): Explanation {
  const type = typeof delayType === 'string' ? delayType : '';
  const known = (DELAY_SENTENCES as Record<string, readonly [string, string]>)[type];
  const [title, sentence] = known ?? ['Delayed', 'The message could not be delivered yet.'];
  const smtp = explainSmtpStatus(diagnosticCode);
  const code = [type ? `DeliveryDelay / ${type}` : 'DeliveryDelay', smtp?.code].filter(Boolean).join(' · ');
  // A passed deadline is the end: SES sends no further attempt (its last event may be a bounce).
  const action: MailrailAction = type === 'SendingDeadlineExceeded' ? 'nothing' : 'ses-retrying';
  return explanation(title, smtp ? `${sentence} The server said ${smtp.code}: ${smtp.sentence}` : sentence, action, code);
}

// ------------------------------------------------------------------ SMTP enhanced status codes

/** RFC 3463 and RFC 7372 enhanced status codes a bounce often carries, by "subject.detail". */
const SMTP_DETAIL_SENTENCES: Record<string, string> = {
  '1.1': 'the mailbox does not exist (the address may be mistyped or closed).',
  '1.2': 'the domain of the address does not exist or accepts no mail.',
  '1.3': 'the address is not written correctly.',
  '1.6': 'the mailbox has moved and has no forwarding address.',
  '1.10': 'the domain of the address says it accepts no mail at all (a "null MX" record).',
  '2.1': 'the mailbox is disabled and takes no mail.',
  '2.2': 'the mailbox is full.',
  '2.3': 'the message is larger than the mailbox accepts.',
  '3.4': "the message is larger than the recipient's mail system accepts.",
  '4.1':
    'the receiving server did not answer, or refused the recipient (Microsoft 365 answers this when the address does not exist there).',
  '4.4': 'no mail server could be found for the domain of the address.',
  '4.7': 'the message could not be delivered within the time allowed.',
  '7.1':
    'the receiving server refused the message by its policy (a spam filter, a blocklist, or a mailbox that accepts only some senders).',
  '7.23': 'the message failed the SPF check of the sending domain.',
  '7.25': "the sending server's address has no matching reverse DNS name.",
  '7.26': "the message failed the sender authentication checks (SPF, DKIM, DMARC): check the domain's DNS records.",
  '7.27': 'the sending domain says it sends no mail (a "null MX" record).',
};

/** Temporary (4.x.x) codes whose meaning differs from the permanent one. */
const SMTP_TEMPORARY_SENTENCES: Record<string, string> = {
  '2.2': 'the mailbox is full for now.',
  '4.7': 'the message has waited too long and its delivery attempts ran out of time.',
  '7.0': 'the receiving server is holding mail back for now (greylisting, a rate limit, or a reputation check); SES tries again.',
  '7.1': 'the receiving server refused the message for now by its policy (often greylisting); SES tries again.',
};

/** What the middle digit of a code is about, when the exact code is not in the table. */
const SMTP_SUBJECT_SENTENCES: Record<string, string> = {
  '0': 'an error the server did not classify.',
  '1': 'a problem with the address.',
  '2': 'a problem with the mailbox.',
  '3': "a problem with the recipient's mail system.",
  '4': 'a network or routing problem on the way to the recipient.',
  '5': 'a problem in the mail protocol exchange.',
  '6': 'a problem with the content of the message.',
  '7': 'a security or policy rule of the receiving server.',
};

// How much of a diagnostic code is looked at: the status code comes near the start of SES's
// "smtp; 550 5.1.1 ..." text, and the rest is the receiving server's free text.
const DIAGNOSTIC_SCAN_LENGTH = 500;
// class.subject.detail (RFC 3463), not part of a longer dotted number (an IP address): bounded
// digit runs with no nested or overlapping quantifiers, so a match is linear in the capped input.
const ENHANCED_STATUS = /(?:^|[^\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.])/;

export interface SmtpStatusExplanation {
  /** The enhanced status code found, "5.1.1". */
  code: string;
  /** What it means, completing "The server said 5.1.1: ...". */
  sentence: string;
  permanent: boolean;
}

/** The enhanced status code in a bounce's diagnostic code ("smtp; 550 5.1.1 user unknown"), explained; null when there is none. */
export function explainSmtpStatus(diagnosticCode: unknown): SmtpStatusExplanation | null {
  if (typeof diagnosticCode !== 'string') return null;
  const m = ENHANCED_STATUS.exec(diagnosticCode.slice(0, DIAGNOSTIC_SCAN_LENGTH));
  if (!m) return null;
  const [, cls, subject, detail] = m;
  const code = `${cls}.${subject}.${detail}`;
  const key = `${Number(subject)}.${Number(detail)}`;
  if (cls === '2') return { code, sentence: 'the receiving server accepted it.', permanent: false };
  const permanent = cls === '5';
  const sentence =
    (!permanent ? SMTP_TEMPORARY_SENTENCES[key] : undefined) ??
    SMTP_DETAIL_SENTENCES[key] ??
    SMTP_SUBJECT_SENTENCES[String(Number(subject))] ??
    'an error the server did not classify.';
  return { code, sentence: permanent ? sentence : `temporarily, ${sentence}`, permanent };
}

// ------------------------------------------------------------------ suppressions and our own outcomes

const SUPPRESSION_SENTENCES: Record<SuppressionReason, readonly [string, string]> = {
  HARD_BOUNCE: [
    'Suppressed after a hard bounce',
    'The address is on your suppression list because an earlier email to it bounced permanently.',
  ],
  COMPLAINT: ['Suppressed after a complaint', 'The address is on your suppression list because its owner marked an earlier email as spam.'],
  MANUAL: ['Suppressed by hand', 'The address was added to your suppression list by hand or through the API.'],
};

/** A recipient mailrail did not send to because the address is on the team's suppression list. */
export function explainSuppression(reason: unknown): Explanation {
  const [title, sentence] = SUPPRESSION_SENTENCES[reason as SuppressionReason] ?? [
    'Suppressed',
    'The address is on your suppression list.',
  ];
  return {
    title,
    sentence,
    action: 'not-sent',
    actionSentence: 'mailrail sends nothing to this address. Remove it from the suppression list if it should receive email again.',
    code: typeof reason === 'string' ? reason : null,
  };
}

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const text = (value: unknown): string | null => (typeof value === 'string' && value ? value : null);

/** The entry of an event's recipient list for `address` (bare, lower-cased), else the first. */
function recipientEntry(list: unknown, address?: string): Record<string, unknown> {
  if (!Array.isArray(list)) return {};
  const entries = list.map(record);
  return (
    (address ? entries.find((r) => typeof r.emailAddress === 'string' && r.emailAddress.toLowerCase() === address) : undefined) ??
    entries[0] ??
    {}
  );
}

/**
 * Any event of an email's timeline, explained: SES's events (from their data) and mailrail's own
 * (queued, failed, cancelled, suppressed). `address` (bare, lower-cased) picks that recipient's
 * diagnostic code in a bounce or delay naming several. Null for an event with nothing to explain.
 */
export function explainEvent(status: EmailStatus, data: unknown, address?: string): Explanation | null {
  const d = record(data);
  switch (status) {
    case 'BOUNCED':
      return explainBounce(d.bounceType, d.bounceSubType, recipientEntry(d.bouncedRecipients, address).diagnosticCode);
    case 'COMPLAINED':
      return explainComplaint(d.complaintFeedbackType, d.complaintSubType);
    case 'DELIVERY_DELAYED':
      return explainDelay(d.delayType, recipientEntry(d.delayedRecipients, address).diagnosticCode);
    case 'REJECTED':
      return explanation(
        'Rejected by SES',
        `SES refused to send the message${text(d.reason) ? ` (${text(d.reason)})` : ''}: it found a virus in it, and sent nothing.`,
        'nothing',
        'Reject',
      );
    case 'RENDERING_FAILURE':
      return explanation(
        'Could not be built',
        `SES could not build the message from its template${text(d.errorMessage) ? ` (${text(d.errorMessage)})` : ''}, and sent nothing.`,
        'nothing',
        'Rendering Failure',
      );
    case 'FAILED':
      return explanation(
        'Failed: SES did not take it',
        `SES refused the message or could not be reached${text(d.message) ? ` (${text(d.message)})` : ''}. mailrail retries temporary errors a few times before it gives up.`,
        'not-sent',
        text(d.error),
      );
    case 'SUPPRESSED':
      return explanation(
        'Not sent: every recipient is suppressed',
        'Every "to" address of this email is on your suppression list, so mailrail kept the email and sent nothing.',
        'not-sent',
        null,
      );
    case 'CANCELLED':
      return explanation(
        'Cancelled',
        text(d.reason) === 'campaign paused'
          ? 'The campaign was paused before this message was sent.'
          : 'The email was cancelled before it was sent.',
        'not-sent',
        null,
      );
    case 'DELIVERED':
      return explanation(
        'Delivered',
        `The receiving server accepted the message${text(d.smtpResponse) ? ` (it answered "${text(d.smtpResponse)}")` : ''}. Whether it lands in the inbox or in spam is up to that provider.`,
        'nothing',
        null,
      );
    case 'SENT':
      return explanation(
        'Sent',
        'SES accepted the message and is delivering it.',
        'nothing',
        null,
        'Nothing to do yet: SES reports the delivery, a delay or a bounce next.',
      );
    case 'CLICKED': {
      const link = text(d.link);
      return explanation('Clicked', link ? `A recipient clicked ${link}.` : 'A recipient clicked a link.', 'nothing', null);
    }
    case 'OPENED':
      return explanation(
        'Opened',
        'A recipient opened the message (SES cannot tell which one, or whether images were blocked).',
        'nothing',
        null,
      );
    case 'QUEUED':
    case 'SCHEDULED':
      return null;
  }
}
