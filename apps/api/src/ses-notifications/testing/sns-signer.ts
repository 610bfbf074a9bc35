import { createSign, randomUUID } from 'node:crypto';
import selfsigned from 'selfsigned';

// Test and benchmark helper: plays Amazon SNS with a self-signed certificate of our own, served
// at an SNS-looking URL through the injected HTTP port (nothing is fetched from the network).

export const TEST_CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem';
export const TEST_TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:mailrail-us-east-1-ses-events';

const SIGNED_KEYS = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
} as const;

export type SnsEnvelope = Record<string, string>;

export interface TestSnsSigner {
  certPem: string;
  certUrl: string;
  /** A signed SNS notification carrying `message` (an object is JSON-encoded). */
  notification(
    message: unknown,
    opts?: { messageId?: string; topicArn?: string; signatureVersion?: '1' | '2'; certUrl?: string },
  ): SnsEnvelope;
  subscriptionConfirmation(subscribeUrl: string, opts?: { topicArn?: string }): SnsEnvelope;
  sign(fields: SnsEnvelope): SnsEnvelope;
}

export async function createTestSnsSigner(): Promise<TestSnsSigner> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], { keySize: 2048, algorithm: 'sha256' });

  const sign = (fields: SnsEnvelope): SnsEnvelope => {
    const keys = SIGNED_KEYS[fields.Type as keyof typeof SIGNED_KEYS];
    const text = keys
      .filter((k) => k in fields)
      .map((k) => `${k}\n${fields[k]}\n`)
      .join('');
    const signer = createSign(fields.SignatureVersion === '2' ? 'RSA-SHA256' : 'RSA-SHA1');
    signer.update(text);
    return { ...fields, Signature: signer.sign(pems.private, 'base64') };
  };

  return {
    certPem: pems.cert,
    certUrl: TEST_CERT_URL,
    sign,
    notification: (message, opts = {}) =>
      sign({
        Type: 'Notification',
        MessageId: opts.messageId ?? randomUUID(),
        TopicArn: opts.topicArn ?? TEST_TOPIC_ARN,
        Message: typeof message === 'string' ? message : JSON.stringify(message),
        Timestamp: new Date().toISOString(),
        SignatureVersion: opts.signatureVersion ?? '1',
        SigningCertURL: opts.certUrl ?? TEST_CERT_URL,
        UnsubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${TEST_TOPIC_ARN}:x`,
      }),
    subscriptionConfirmation: (subscribeUrl, opts = {}) =>
      sign({
        Type: 'SubscriptionConfirmation',
        MessageId: randomUUID(),
        Token: 'token-123',
        TopicArn: opts.topicArn ?? TEST_TOPIC_ARN,
        Message: 'You have chosen to subscribe to the topic. To confirm the subscription, visit the SubscribeURL included in this message.',
        SubscribeURL: subscribeUrl,
        Timestamp: new Date().toISOString(),
        SignatureVersion: '1',
        SigningCertURL: TEST_CERT_URL,
      }),
  };
}

/** An SES event in the event-publishing format (`eventType`), as SES puts it in the SNS Message. */
export function sesEventMessage(
  eventType: string,
  opts: {
    sesMessageId: string;
    emailId?: string;
    legacyHeader?: boolean;
    timestamp?: string;
    detail?: Record<string, unknown>;
    format?: 'event' | 'notification';
  },
): Record<string, unknown> {
  const timestamp = opts.timestamp ?? new Date().toISOString();
  const headers = opts.emailId ? [{ name: opts.legacyHeader ? 'X-Unsend-Email-ID' : 'X-Usesend-Email-ID', value: opts.emailId }] : [];
  const detailKey: Record<string, string> = {
    Send: 'send',
    Delivery: 'delivery',
    Bounce: 'bounce',
    Complaint: 'complaint',
    Reject: 'reject',
    DeliveryDelay: 'deliveryDelay',
    Open: 'open',
    Click: 'click',
    'Rendering Failure': 'failure',
    Subscription: 'subscription',
  };
  const defaults: Record<string, Record<string, unknown>> = {
    Send: {},
    Delivery: { timestamp, processingTimeMillis: 500, recipients: ['to@example.org'], smtpResponse: '250 ok' },
    Bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'to@example.org' }], timestamp },
    Complaint: { complainedRecipients: [{ emailAddress: 'to@example.org' }], timestamp, complaintFeedbackType: 'abuse' },
    Reject: { reason: 'Bad content' },
    DeliveryDelay: { delayType: 'MailboxFull', delayedRecipients: [{ emailAddress: 'to@example.org' }], timestamp },
    Open: { ipAddress: '192.0.2.1', timestamp, userAgent: 'Mozilla/5.0' },
    Click: { ipAddress: '192.0.2.1', timestamp, link: 'https://example.org/x', userAgent: 'Mozilla/5.0' },
    'Rendering Failure': { errorMessage: 'Attribute name is missing', templateName: 't' },
    Subscription: { contactList: 'list', timestamp, source: 'UnsubscribeHeader', newTopicPreferences: { unsubscribeAll: true } },
  };
  return {
    [opts.format === 'notification' ? 'notificationType' : 'eventType']: eventType,
    mail: {
      timestamp,
      source: 'from@example.com',
      messageId: opts.sesMessageId,
      destination: ['to@example.org'],
      headersTruncated: false,
      headers,
    },
    [detailKey[eventType] ?? 'detail']: { ...(defaults[eventType] ?? {}), ...(opts.detail ?? {}) },
  };
}
