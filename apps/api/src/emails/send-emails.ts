import { createEmailIntake, submitEmails } from '@mailrail/domain/emails/email-intake';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { buildDrafts, type DraftContext } from './build-drafts';
import { readIdempotencyKey } from '@mailrail/domain/emails/idempotency';
import { type SendEmailPayload } from './schemas';

export type SendContext = DraftContext;

/** One per process: the send route and the dashboard's own mail share its intake (and committer). */
export function createSendContext(deps: ApiDeps): SendContext {
  return { deps, intake: createEmailIntake(deps) };
}

/**
 * Validates every payload against the database, then writes them all through core's email
 * intake (the path the SMTP relay shares) and enqueues them. Returns the email ids in input
 * order. Nothing is written unless every payload is valid.
 */
export async function sendEmails(
  ctx: SendContext,
  auth: AuthContext,
  input: { payloads: SendEmailPayload[]; batch: boolean; idempotencyKey: string | undefined; body: unknown },
): Promise<string[]> {
  return submitEmails(ctx.intake, auth, {
    idempotencyKey: input.idempotencyKey,
    body: input.body,
    build: () => buildDrafts(ctx, auth, input.payloads, input.batch),
  });
}

/** POST /emails: the body parsed with sendEmailPayload and the Idempotency-Key header in, the answer's body out. */
export async function acceptEmail(
  ctx: SendContext,
  auth: AuthContext,
  payload: SendEmailPayload,
  idempotencyHeader: string | string[] | undefined,
): Promise<{ emailId: string }> {
  const idempotencyKey = readIdempotencyKey(idempotencyHeader);
  const [emailId] = await sendEmails(ctx, auth, { payloads: [payload], batch: false, idempotencyKey, body: payload });
  return { emailId };
}

/** POST /emails/batch, likewise. */
export async function acceptBatch(
  ctx: SendContext,
  auth: AuthContext,
  payloads: SendEmailPayload[],
  idempotencyHeader: string | string[] | undefined,
): Promise<{ data: { emailId: string }[] }> {
  const idempotencyKey = readIdempotencyKey(idempotencyHeader);
  const ids = await sendEmails(ctx, auth, { payloads, batch: true, idempotencyKey, body: payloads });
  return { data: ids.map((emailId) => ({ emailId })) };
}
