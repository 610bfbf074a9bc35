import { z } from 'zod';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { parseSesEvent, type SesEvent } from '@mailrail/domain/ses-events/ses-event';
import { sesEventJobOptions, type SesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { type Logger } from '@mailrail/platform/log/logger';
import { parseOrThrow } from '../http/validate';
import type { Enqueue } from './enqueue-batcher';
import { isSnsHttpsUrl, type HttpGet } from './http-fetch';
import { SnsCertificateUnavailable, SnsRejected, type SnsVerifier } from './sns-verifier';
import type { TopicPolicy } from './topic-policy';

// SNS stamps a message when it is published; a clock a little ahead of ours is tolerated.
const MAX_FUTURE_SKEW_MS = 5 * 60_000;

export interface SnsIntakeContext {
  verifier: SnsVerifier;
  httpGet: HttpGet;
  /** Adds a job to `queueNames.sesEvents`. */
  enqueue: Enqueue;
  /** Topics mailrail owns (SNS_TOPIC_ARNS and those `ses setup` stored); any other is refused. */
  topics: TopicPolicy;
  /** Older signed Timestamps are refused: a replay after the dedupe row was pruned does nothing. */
  maxMessageAgeMs: number;
  now: () => number;
  /**
   * Records the SES acceptance a Send event reports (recordSendEventAcceptance) before the event is
   * queued, so an email in doubt is settled without waiting for the queue.
   */
  recordAcceptance?: (event: SesEvent) => Promise<unknown>;
  /** Counts a refused post by reason (a metric). */
  onRejected?: (reason: string) => void;
  log: Logger;
}

const snsEnvelope = z
  .object({
    Type: z.enum(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']),
    // SNS message ids are UUIDs; the pattern also keeps them safe as BullMQ job ids.
    MessageId: z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'must be an SNS message id'),
    TopicArn: z.string().min(1).max(256),
    Message: z.string(),
    Timestamp: z.string().max(64),
    SignatureVersion: z.enum(['1', '2']),
    Signature: z.string().min(1),
    SigningCertURL: z.string().min(1),
    SubscribeURL: z.string().optional(),
    Token: z.string().optional(),
    Subject: z.string().nullish(),
  })
  .loose();

export type SnsIntakeResult = { data: string };

/**
 * One SNS HTTP POST: verified before anything is written, then either a subscription confirmed
 * or one job queued. A forged or malformed post writes nothing.
 */
export async function receiveSnsPost(ctx: SnsIntakeContext, rawBody: unknown, messageTypeHeader?: string): Promise<SnsIntakeResult> {
  if (typeof rawBody !== 'string' || rawBody.length === 0) throw new ApiError('BAD_REQUEST', 'Empty SNS message');
  let payload: unknown;
  try {
    payload = JSON.parse(rawBody);
  } catch {
    throw new ApiError('BAD_REQUEST', 'Malformed JSON in request body');
  }
  const envelope = parseOrThrow(snsEnvelope, payload, 'SNS message');
  if (messageTypeHeader && messageTypeHeader !== envelope.Type) {
    throw new ApiError('BAD_REQUEST', 'x-amz-sns-message-type does not match the message Type');
  }
  // Checked before the signature: an unknown topic or a stale message costs no certificate fetch.
  if (!(await ctx.topics.isAccepted(envelope.TopicArn))) {
    ctx.onRejected?.('unknown-topic');
    ctx.log.warn({ topicArn: envelope.TopicArn, type: envelope.Type }, 'SNS post from a topic mailrail does not own refused');
    throw new ApiError('FORBIDDEN', 'SNS topic is not accepted here');
  }
  const sentAt = Date.parse(envelope.Timestamp);
  const now = ctx.now();
  if (Number.isNaN(sentAt)) throw new ApiError('BAD_REQUEST', 'SNS Timestamp is not a date');
  if (now - sentAt > ctx.maxMessageAgeMs || sentAt - now > MAX_FUTURE_SKEW_MS) {
    ctx.onRejected?.('stale');
    ctx.log.warn(
      { topicArn: envelope.TopicArn, messageId: envelope.MessageId, timestamp: envelope.Timestamp },
      'SNS message outside the accepted time window refused',
    );
    throw new ApiError('FORBIDDEN', 'SNS message Timestamp is too old or in the future');
  }
  try {
    await ctx.verifier.verify(payload as Record<string, unknown>);
  } catch (err) {
    if (err instanceof SnsRejected) {
      ctx.onRejected?.('bad-signature');
      throw new ApiError('FORBIDDEN', err.message);
    }
    if (err instanceof SnsCertificateUnavailable) {
      ctx.onRejected?.('certificate-unavailable');
      ctx.log.warn({ err }, 'SNS signing certificate unavailable');
      throw new ApiError('SERVICE_UNAVAILABLE', 'SNS signing certificate unavailable, retry later');
    }
    throw err;
  }

  switch (envelope.Type) {
    case 'SubscriptionConfirmation':
      return confirmSubscription(ctx, envelope.SubscribeURL, envelope.TopicArn);
    case 'UnsubscribeConfirmation':
      ctx.log.warn({ topicArn: envelope.TopicArn }, 'SNS subscription removed');
      return { data: 'Unsubscribe confirmation received' };
    case 'Notification':
      return enqueueSesEvent(ctx, envelope.MessageId, envelope.TopicArn, envelope.Message);
  }
}

async function confirmSubscription(ctx: SnsIntakeContext, subscribeUrl: string | undefined, topicArn: string): Promise<SnsIntakeResult> {
  if (!subscribeUrl || !isSnsHttpsUrl(subscribeUrl)) throw new ApiError('BAD_REQUEST', 'SubscribeURL must be an Amazon SNS https URL');
  let status: number;
  try {
    status = (await ctx.httpGet(subscribeUrl)).status;
  } catch (err) {
    ctx.log.warn({ err, topicArn }, 'SNS subscription confirmation failed');
    throw new ApiError('SERVICE_UNAVAILABLE', 'Could not confirm the SNS subscription, retry later');
  }
  if (status !== 200) {
    ctx.log.warn({ status, topicArn }, 'SNS refused the subscription confirmation');
    throw new ApiError('SERVICE_UNAVAILABLE', `SNS answered ${status} to the subscription confirmation`);
  }
  ctx.log.info({ topicArn }, 'SNS subscription confirmed');
  return { data: 'Subscription confirmed' };
}

async function enqueueSesEvent(ctx: SnsIntakeContext, messageId: string, topicArn: string, message: string): Promise<SnsIntakeResult> {
  const parsed = parseSesEvent(message);
  if (!parsed.ok) {
    if (parsed.reason === 'not-json') throw new ApiError('BAD_REQUEST', 'SNS Message is not JSON');
    // A genuine notification we have no use for (for example SES's AmazonSnsSubscriptionSucceeded):
    // acknowledged so SNS does not retry it.
    ctx.log.info({ messageId, reason: parsed.reason, type: parsed.type }, 'SNS notification ignored');
    return { data: 'Notification ignored' };
  }
  // Before the enqueue: if recording fails, SNS gets an error and retries, and the job is not queued twice.
  await ctx.recordAcceptance?.(parsed.event);
  const job: SesEventJob = { snsMessageId: messageId, topicArn, message };
  // The job id is the SNS MessageId: a redelivery while the job is still kept is dropped here,
  // and the SesNotification table catches any later one.
  await ctx.enqueue(parsed.event.type, job, { ...sesEventJobOptions, jobId: messageId });
  return { data: 'Notification queued' };
}
