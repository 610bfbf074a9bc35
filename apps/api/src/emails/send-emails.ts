import { badRequest } from '@mailrail/core';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { buildDrafts, type DraftContext } from './build-drafts';
import { createEmailCommitter, type EmailCommitter } from './email-committer';
import { withIdempotency } from './idempotency';
import { createTeamDomains } from './team-domains';
import type { SendEmailPayload } from './schemas';

export interface SendContext extends DraftContext {
  committer: EmailCommitter;
}

/** One per process: the send route and the dashboard's own mail share its group committer. */
export function createSendContext(deps: ApiDeps): SendContext {
  return {
    deps,
    domains: createTeamDomains(deps.db, deps.clock),
    committer: createEmailCommitter(
      { db: deps.db, queues: deps.queues, log: deps.log, now: () => deps.clock.now() },
      { maxBatch: deps.config.EMAIL_COMMIT_MAX_BATCH, concurrency: deps.config.EMAIL_COMMIT_CONCURRENCY },
    ),
  };
}

/**
 * Validates every payload against the database, then writes them all (group-committed with
 * concurrent sends) and enqueues them. Returns the email ids in input order. Nothing is written
 * unless every payload is valid.
 */
export async function sendEmails(
  ctx: SendContext,
  auth: AuthContext,
  input: { payloads: SendEmailPayload[]; batch: boolean; idempotencyKey: string | undefined; body: unknown },
): Promise<string[]> {
  return withIdempotency(
    ctx.deps.redis,
    { prefix: ctx.deps.config.REDIS_PREFIX, teamId: auth.teamId, key: input.idempotencyKey, body: input.body },
    async () => {
      const drafts = await buildDrafts(ctx, auth, input.payloads, input.batch);
      try {
        const created = await ctx.committer.submit(drafts);
        return created.map((c) => c.id);
      } catch (err) {
        // The only foreign key we can break is the domain: deleted since our cached lookup.
        if (foreignKeyViolation(err)) {
          ctx.domains.forget(auth.teamId);
          throw badRequest('The domain of the from address no longer exists');
        }
        throw err;
      }
    },
  );
}

function foreignKeyViolation(err: unknown): boolean {
  const cause = (err as { meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } })?.meta?.driverAdapterError?.cause;
  return cause?.originalCode === '23503';
}
