import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const webhookHeaders = {
  event: 'X-UseSend-Event',
  call: 'X-UseSend-Call',
  timestamp: 'X-UseSend-Timestamp',
  signature: 'X-UseSend-Signature',
  retry: 'X-UseSend-Retry',
} as const;

/** `whsec_` + 32 random bytes in base64url; the whole string is the HMAC key, as in useSend. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`: what usesend-js verifies. */
export function signWebhookBody(secret: string, timestampMs: number | string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampMs}.${body}`).digest('hex')}`;
}

/** Receiver-side check (the same as usesend-js): signature match and a timestamp within tolerance. */
export function verifyWebhookSignature(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: string,
  opts: { toleranceMs?: number; nowMs?: number } = {},
): boolean {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp || !/^\d+$/.test(timestamp)) return false;
  const tolerance = opts.toleranceMs ?? 5 * 60_000;
  if (Math.abs((opts.nowMs ?? Date.now()) - Number(timestamp)) > tolerance) return false;
  const expected = Buffer.from(signWebhookBody(secret, timestamp, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
