import { ApiError, badRequest, notFound } from '@mailrail/domain/errors/api-error';
import { EMAIL_OUTBOX_RETURNING, emailOutboxInsertSql } from '@mailrail/domain/sql/email-outbox';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { queueNames, singleSendJob } from '@mailrail/platform/queue/queues';
import { sendDelay } from '@mailrail/domain/emails/create-emails';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';

// Reschedule and cancel race the worker, which claims an email with
//   latestStatus IN ('QUEUED','SCHEDULED') AND "sesEmailId" IS NULL AND (lease free)
// Both therefore change the row with ONE conditional UPDATE guarded by the same lease test: either
// we win and the worker's claim no longer matches, or the worker holds the lease and we answer 400.
const GUARD = `"latestStatus" = 'SCHEDULED' AND ("sendLeaseUntil" IS NULL OR "sendLeaseUntil" < now())`;

function scope(auth: AuthContext): { sql: string; params: unknown[] } {
  return auth.domainId !== null
    ? { sql: `id = $1 AND "teamId" = $2 AND "domainId" = $3`, params: [auth.domainId] }
    : { sql: `id = $1 AND "teamId" = $2`, params: [] };
}

/** After a guarded UPDATE matched nothing: 404 if the email is not the caller's, else 400. */
async function explainMiss(deps: ApiDeps, auth: AuthContext, emailId: string): Promise<never> {
  const exists = await deps.db.email.findFirst({
    where: { id: emailId, teamId: auth.teamId, ...(auth.domainId !== null ? { domainId: auth.domainId } : {}) },
    select: { id: true },
  });
  if (!exists) throw notFound('Email not found');
  throw badRequest('Email already processed');
}

async function regionOf(deps: ApiDeps, domainId: number | null): Promise<string> {
  if (domainId === null) return deps.config.AWS_REGION;
  const d = await deps.db.domain.findUnique({ where: { id: domainId }, select: { region: true } });
  return d?.region ?? deps.config.AWS_REGION;
}

export async function cancelEmail(deps: ApiDeps, auth: AuthContext, emailId: string): Promise<{ emailId: string }> {
  const s = scope(auth);
  // The status change and its event in one statement, hence one transaction.
  const rows = await prismaExecutor(deps.db).query<{ domainId: number | null }>(
    `WITH cancelled AS (
       UPDATE "Email" SET "latestStatus" = 'CANCELLED', "updatedAt" = now()
       WHERE ${s.sql} AND ${GUARD}
       RETURNING ${EMAIL_OUTBOX_RETURNING}
     ), event AS (
       INSERT INTO "EmailEvent" ("emailId", status, "createdAt") SELECT id, 'CANCELLED', now() FROM cancelled
     ), outbox AS (
       ${emailOutboxInsertSql('cancelled')}
     )
     SELECT "domainId" FROM cancelled`,
    [emailId, auth.teamId, ...s.params],
  );
  if (rows.length === 0) return explainMiss(deps, auth, emailId);
  // The job is now harmless (the worker skips cancelled emails); removing it only saves work.
  try {
    const queue = deps.queues.get(queueNames.send(await regionOf(deps, rows[0].domainId), 'transactional'));
    await queue.remove(emailId);
  } catch (err) {
    deps.log.warn({ err, emailId }, 'could not remove the job of a cancelled email');
  }
  return { emailId };
}

export async function rescheduleEmail(deps: ApiDeps, auth: AuthContext, emailId: string, scheduledAt: Date): Promise<{ emailId: string }> {
  const s = scope(auth);
  const rows = await prismaExecutor(deps.db).query<{ domainId: number | null }>(
    `UPDATE "Email" SET "scheduledAt" = $${3 + s.params.length}::timestamptz, "updatedAt" = now()
     WHERE ${s.sql} AND ${GUARD}
     RETURNING "domainId"`,
    [emailId, auth.teamId, ...s.params, scheduledAt],
  );
  if (rows.length === 0) return explainMiss(deps, auth, emailId);
  // The row is the truth; if Redis fails here the sweeper sends it when due. Never a 500.
  try {
    const queue = deps.queues.get(queueNames.send(await regionOf(deps, rows[0].domainId), 'transactional'));
    const delay = sendDelay(scheduledAt, deps.clock.now());
    const job = await queue.getJob(emailId);
    if (job && (await job.isDelayed())) {
      await job.changeDelay(delay);
    } else {
      // Missing, or in a state changeDelay refuses: replace it (a job id can exist only once).
      if (job) await job.remove().catch((err: unknown) => deps.log.warn({ err, emailId }, 'could not remove the old job'));
      const replacement = singleSendJob(emailId, delay);
      await queue.add(replacement.name, replacement.data, replacement.opts);
    }
  } catch (err) {
    deps.log.warn({ err: err instanceof ApiError ? err.message : err, emailId }, 'could not move the job of a rescheduled email');
  }
  return { emailId };
}
