import { decryptSecret } from '@mailrail/platform/crypto/secrets';
import { signWebhookBody, webhookHeaders } from '@mailrail/domain/webhooks/signing';
import { webhookPayloadVersion } from '@mailrail/domain/webhooks/events';
import { type Db } from '@mailrail/platform/db/client';
import { type ResolveHost } from '@mailrail/domain/webhooks/ssrf';
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

type DeliveryRow = NonNullable<Awaited<ReturnType<typeof loadDelivery>>>;
type Webhook = DeliveryRow['webhook'];

/** What one POST gave: the endpoint's answer (if any) and the error (null on a 2xx). */
interface AttemptResult {
  responseStatus: number | null;
  responseText: string | null;
  error: string | null;
  durationMs: number;
  at: Date;
}

/**
 * Makes one attempt of one delivery and records it on the row. The row is the truth: it says
 * which attempt this is, whether the endpoint may still be called and when to try again.
 */
export async function deliverWebhook(db: Db, settings: DeliverySettings, deliveryId: string): Promise<DeliveryOutcome> {
  const row = await loadDelivery(db, deliveryId);
  if (!row) return { result: 'gone' };
  if (row.status === 'DELIVERED' || row.status === 'FAILED' || row.status === 'DISCARDED') return { result: 'finished' };
  if (row.webhook.status !== 'ACTIVE') return discard(db, row);

  const secret = readSecret(settings, row.webhook);
  if (secret === null) return failUnsignable(db, row);

  const attempt = row.attempt + 1;
  await db.webhookDelivery.update({ where: { id: row.id }, data: { status: 'IN_PROGRESS', attempt } });
  const { body, headers } = signedRequest(row, secret, attempt);
  const result = await post(row.webhook.url, body, headers, settings);
  if (result.error === null) {
    await recordSuccess(db, row, result);
    return { result: 'delivered' };
  }
  return recordFailure(db, settings, row, attempt, { ...result, error: result.error });
}

function loadDelivery(db: Db, deliveryId: string) {
  return db.webhookDelivery.findUnique({ where: { id: deliveryId }, include: { webhook: true, event: true } });
}

/** The endpoint is paused or disabled: this delivery is dropped. */
async function discard(db: Db, row: DeliveryRow): Promise<DeliveryOutcome> {
  await db.webhookDelivery.update({
    where: { id: row.id },
    data: { status: 'DISCARDED', nextAttemptAt: null, lastError: `webhook is ${row.webhook.status}` },
  });
  return { result: 'discarded' };
}

/** The webhook's signing secret, or null when SECRET changed since the webhook was made. */
function readSecret(settings: DeliverySettings, webhook: Webhook): string | null {
  try {
    return decryptSecret(settings.secret, webhook.secretEnc);
  } catch {
    return null;
  }
}

/** Signing is impossible until the secret is rotated. */
async function failUnsignable(db: Db, row: DeliveryRow): Promise<DeliveryOutcome> {
  const error = 'webhook secret cannot be decrypted with the current SECRET; rotate the secret';
  await db.webhookDelivery.update({ where: { id: row.id }, data: { status: 'FAILED', nextAttemptAt: null, lastError: error } });
  return { result: 'failed', error };
}

/** The JSON body of this attempt and its headers, signed with the webhook's secret. */
function signedRequest(row: DeliveryRow, secret: string, attempt: number): { body: string; headers: Record<string, string> } {
  const { event } = row;
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
  return { body, headers };
}

/** One POST; a non-2xx answer, a network error or the timeout all become `error`. */
async function post(url: string, body: string, headers: Record<string, string>, settings: DeliverySettings): Promise<AttemptResult> {
  const started = Date.now();
  let responseStatus: number | null = null;
  let responseText: string | null = null;
  let error: string | null = null;
  try {
    const res = await postWebhook(url, body, headers, settings);
    responseStatus = res.status;
    responseText = res.text;
    if (res.status < 200 || res.status >= 300) error = `endpoint answered HTTP ${res.status}`;
  } catch (err) {
    error = describeError(err, settings.timeoutMs);
  }
  return { responseStatus, responseText, error, durationMs: Date.now() - started, at: new Date() };
}

async function recordSuccess(db: Db, row: DeliveryRow, result: AttemptResult): Promise<void> {
  const { responseStatus, responseText, durationMs, at: now } = result;
  await db.$transaction([
    db.webhookDelivery.update({
      where: { id: row.id },
      data: { status: 'DELIVERED', responseStatus, responseText, durationMs, lastError: null, nextAttemptAt: null },
    }),
    // Many deliveries to one endpoint succeed at once: write its row only when something
    // changes (a failure streak ends, or lastSuccessAt is more than a second old).
    db.webhook.updateMany({
      where: {
        id: row.webhook.id,
        OR: [{ consecutiveFailures: { gt: 0 } }, { lastSuccessAt: null }, { lastSuccessAt: { lt: new Date(now.getTime() - 1000) } }],
      },
      data: { consecutiveFailures: 0, lastSuccessAt: now },
    }),
  ]);
}

/** Counts the failure on the endpoint (disabling it after too many), then schedules a retry or gives up. */
async function recordFailure(
  db: Db,
  settings: DeliverySettings,
  row: DeliveryRow,
  attempt: number,
  result: AttemptResult & { error: string },
): Promise<DeliveryOutcome> {
  const { responseStatus, responseText, durationMs, error, at: now } = result;
  const failures = await countEndpointFailure(db, settings, row.webhook.id, now);
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

/** Adds one to the endpoint's failure streak, AUTO_DISABLES it at the limit; returns the streak. */
async function countEndpointFailure(db: Db, settings: DeliverySettings, webhookId: string, now: Date): Promise<number> {
  return db.$transaction(async (tx) => {
    const w = await tx.webhook.update({
      where: { id: webhookId },
      data: { consecutiveFailures: { increment: 1 }, lastFailureAt: now },
      select: { consecutiveFailures: true },
    });
    if (w.consecutiveFailures >= settings.autoDisableAfter) {
      await tx.webhook.updateMany({ where: { id: webhookId, status: 'ACTIVE' }, data: { status: 'AUTO_DISABLED' } });
    }
    return w.consecutiveFailures;
  });
}
