import { decryptSecret, signWebhookBody, webhookHeaders, webhookPayloadVersion, type Db, type ResolveHost } from '@mailrail/core';
import { postWebhook } from './post-webhook';

export interface DeliverySettings {
  /** Waits before the 2nd, 3rd, ... attempt; attempts = 1 + its length. */
  retryDelaysMs: number[];
  timeoutMs: number;
  /** Consecutive failed attempts after which an endpoint is AUTO_DISABLED. */
  autoDisableAfter: number;
  allowPrivate: boolean;
  secret: string;
  resolveHost?: ResolveHost;
}

export type DeliveryOutcome =
  | { result: 'delivered' }
  | { result: 'retry'; delayMs: number; error: string }
  | { result: 'failed'; error: string }
  | { result: 'discarded' | 'gone' | 'finished' };

const MAX_ERROR_CHARS = 1000;

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
  return [e?.code, e?.message].filter(Boolean).join(': ').slice(0, MAX_ERROR_CHARS) || 'request failed';
}

/**
 * Makes one attempt of one delivery and records it on the row. The row is the truth: it says
 * which attempt this is, whether the endpoint may still be called and when to try again.
 */
export async function deliverWebhook(db: Db, settings: DeliverySettings, deliveryId: string): Promise<DeliveryOutcome> {
  const row = await db.webhookDelivery.findUnique({ where: { id: deliveryId }, include: { webhook: true, event: true } });
  if (!row) return { result: 'gone' };
  if (row.status === 'DELIVERED' || row.status === 'FAILED' || row.status === 'DISCARDED') return { result: 'finished' };
  const { webhook, event } = row;
  if (webhook.status !== 'ACTIVE') {
    await db.webhookDelivery.update({
      where: { id: row.id },
      data: { status: 'DISCARDED', nextAttemptAt: null, lastError: `webhook is ${webhook.status}` },
    });
    return { result: 'discarded' };
  }

  let secret: string;
  try {
    secret = decryptSecret(settings.secret, webhook.secretEnc);
  } catch {
    // SECRET changed since the webhook was made: signing is impossible until the secret is rotated.
    const error = 'webhook secret cannot be decrypted with the current SECRET; rotate the secret';
    await db.webhookDelivery.update({ where: { id: row.id }, data: { status: 'FAILED', nextAttemptAt: null, lastError: error } });
    return { result: 'failed', error };
  }

  const attempt = row.attempt + 1;
  await db.webhookDelivery.update({ where: { id: row.id }, data: { status: 'IN_PROGRESS', attempt } });

  const body = JSON.stringify({
    id: event.id,
    type: event.type,
    version: webhookPayloadVersion,
    createdAt: event.createdAt.toISOString(),
    teamId: event.teamId,
    data: event.data,
    attempt,
  });
  const timestamp = Date.now();
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'mailrail-webhook/1.0',
    [webhookHeaders.event]: event.type,
    [webhookHeaders.call]: row.id,
    [webhookHeaders.timestamp]: String(timestamp),
    [webhookHeaders.signature]: signWebhookBody(secret, timestamp, body),
    [webhookHeaders.retry]: attempt > 1 ? 'true' : 'false',
  };

  const started = Date.now();
  let responseStatus: number | null = null;
  let responseText: string | null = null;
  let error: string | null = null;
  try {
    const res = await postWebhook(webhook.url, body, headers, settings);
    responseStatus = res.status;
    responseText = res.text;
    if (res.status < 200 || res.status >= 300) error = `endpoint answered HTTP ${res.status}`;
  } catch (err) {
    error = describeError(err, settings.timeoutMs);
  }
  const durationMs = Date.now() - started;
  const now = new Date();

  if (error === null) {
    await db.$transaction([
      db.webhookDelivery.update({
        where: { id: row.id },
        data: { status: 'DELIVERED', responseStatus, responseText, durationMs, lastError: null, nextAttemptAt: null },
      }),
      // Many deliveries to one endpoint succeed at once: write its row only when something
      // changes (a failure streak ends, or lastSuccessAt is more than a second old).
      db.webhook.updateMany({
        where: { id: webhook.id, OR: [{ consecutiveFailures: { gt: 0 } }, { lastSuccessAt: null }, { lastSuccessAt: { lt: new Date(now.getTime() - 1000) } }] },
        data: { consecutiveFailures: 0, lastSuccessAt: now },
      }),
    ]);
    return { result: 'delivered' };
  }

  const failures = await db.$transaction(async (tx) => {
    const w = await tx.webhook.update({
      where: { id: webhook.id },
      data: { consecutiveFailures: { increment: 1 }, lastFailureAt: now },
      select: { consecutiveFailures: true },
    });
    if (w.consecutiveFailures >= settings.autoDisableAfter) {
      await tx.webhook.updateMany({ where: { id: webhook.id, status: 'ACTIVE' }, data: { status: 'AUTO_DISABLED' } });
    }
    return w.consecutiveFailures;
  });
  const disabled = failures >= settings.autoDisableAfter;
  const final = disabled || attempt > settings.retryDelaysMs.length;
  const delayMs = final ? 0 : settings.retryDelaysMs[attempt - 1];
  await db.webhookDelivery.update({
    where: { id: row.id },
    data: {
      status: final ? 'FAILED' : 'PENDING',
      responseStatus,
      responseText,
      durationMs,
      lastError: disabled ? `${error}; endpoint disabled after ${failures} consecutive failures` : error,
      nextAttemptAt: final ? null : new Date(now.getTime() + delayMs),
    },
  });
  return final ? { result: 'failed', error } : { result: 'retry', delayMs, error };
}
