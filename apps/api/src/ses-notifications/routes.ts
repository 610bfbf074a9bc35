import express, { Router } from 'express';
import { queueNames } from '@mailrail/core';
import type { ApiDeps } from '../deps';
import { batchedEnqueue } from './enqueue-batcher';
import { fetchHttpGet, type HttpGet } from './http-fetch';
import { receiveSnsPost } from './intake';
import { createSnsVerifier, type SnsVerifier } from './sns-verifier';

// SNS posts at most 256 KB of message; the envelope adds a little.
const SNS_BODY_LIMIT = '512kb';

export interface SesNotificationOptions {
  httpGet?: HttpGet;
  verifier?: SnsVerifier;
}

/** `POST /api/ses/notifications`: SES events through SNS. No API key: the SNS signature is the authentication. */
export function sesNotificationRoutes(deps: ApiDeps, opts: SesNotificationOptions = {}): Router {
  const httpGet = opts.httpGet ?? fetchHttpGet;
  const topicArns = deps.config.SNS_TOPIC_ARNS?.split(',').map((a) => a.trim()).filter(Boolean) ?? [];
  const ctx = {
    verifier: opts.verifier ?? createSnsVerifier(httpGet),
    httpGet,
    enqueue: batchedEnqueue(deps.queues.get(queueNames.sesEvents)),
    topicArns: topicArns.length ? topicArns : null,
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
