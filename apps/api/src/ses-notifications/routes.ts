import express, { Router } from 'express';
import { configuredSnsTopicArns, listOwnedSnsTopicArns } from '@mailrail/domain/ses-events/sns-topics';
import type { SesEvent } from '@mailrail/domain/ses-events/ses-event';
import { recordSendEventAcceptance } from '@mailrail/domain/sql/ses-acceptance';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { queueNames } from '@mailrail/platform/queue/queues';
import { type Metrics } from '@mailrail/platform/metrics/metrics';
import type { ApiDeps } from '../deps';
import { batchedEnqueue } from './enqueue-batcher';
import { fetchHttpGet, type HttpGet } from './http-fetch';
import { receiveSnsPost } from './intake';
import { createSnsVerifier, type SnsVerifier } from './sns-verifier';
import { createTopicPolicy } from './topic-policy';

// SNS posts at most 256 KB of message; the envelope adds a little.
const SNS_BODY_LIMIT = '512kb';

export interface SesNotificationOptions {
  httpGet?: HttpGet;
  verifier?: SnsVerifier;
  /** Counts refused posts (mailrail_sns_rejected_total) when given. */
  metrics?: Metrics;
}

/** `POST /api/ses/notifications`: SES events through SNS. No API key: the SNS signature is the authentication. */
export function sesNotificationRoutes(deps: ApiDeps, opts: SesNotificationOptions = {}): Router {
  const httpGet = opts.httpGet ?? fetchHttpGet;
  const ctx = {
    verifier: opts.verifier ?? createSnsVerifier(httpGet),
    httpGet,
    enqueue: batchedEnqueue(deps.queues.get(queueNames.sesEvents)),
    recordAcceptance: (event: SesEvent) => recordSendEventAcceptance(prismaExecutor(deps.db), event),
    topics: createTopicPolicy({
      configured: configuredSnsTopicArns(deps.config.SNS_TOPIC_ARNS),
      loadStored: () => listOwnedSnsTopicArns(deps.db),
    }),
    maxMessageAgeMs: deps.config.SNS_MAX_MESSAGE_AGE_SECONDS * 1000,
    now: () => deps.clock.now().getTime(),
    onRejected: (reason: string) => opts.metrics?.snsRejected.inc({ reason }),
    log: deps.log,
  };
  const r = Router();
  // SNS sends Content-Type text/plain whatever the body: read every post as text.
  r.post('/', express.text({ type: () => true, limit: SNS_BODY_LIMIT }), async (req, res) => {
    const typeHeader = req.headers['x-amz-sns-message-type'];
    res.json(await receiveSnsPost(ctx, req.body, typeof typeHeader === 'string' ? typeHeader : undefined));
  });
  // Lets an operator check the URL is reachable before subscribing it.
  r.get('/', (_req, res) => {
    res.json({ data: 'SES notification endpoint' });
  });
  return r;
}
