import type { Clock } from '@mailrail/platform/clock';
import type { Config } from '@mailrail/platform/config/schema';
import type { Db } from '@mailrail/platform/db/client';
import { createSqlPool, type SqlExecutor, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { checkSenderDomain, type SenderDomainCheck } from '../domains/sender-domain';
import { badRequest } from '../errors/api-error';
import type { Logger } from '@mailrail/platform/log/logger';
import type { QueueFactory } from '@mailrail/platform/queue/queues';
import type { Redis } from '@mailrail/platform/redis/client';
import type { AuthContext } from '../teams/api-key-auth';
import type { EmailDraft } from './create-emails';
import { createEmailCommitter, type EmailCommitter } from './email-committer';
import { withIdempotency } from './idempotency';
import { createTeamDomains, type TeamDomain, type TeamDomains } from './team-domains';
import { hasSqlState } from '@mailrail/platform/db/sql/postgres-error';

// The one way an email is accepted, whichever door it comes in by (POST /api/v1/emails and
// /emails/batch, the SMTP relay): the sender-domain rule on the team's cached domains, the size
// and recipient limits, the idempotency key, then the group committer (suppressions, one INSERT
// with the first events, the send jobs). Each door turns its input into drafts with these checks
// and maps the errors to its own protocol.

/** Recipients (to, cc and bcc together) of one email: SES's limit. */
export const MAX_RECIPIENTS = 50;

export interface EmailIntakeDeps {
  config: Pick<Config, 'REDIS_PREFIX' | 'redisHashTags' | 'EMAIL_MAX_MESSAGE_MB' | 'EMAIL_COMMIT_MAX_BATCH' | 'EMAIL_COMMIT_CONCURRENCY'>;
  db: Db;
  /** The group committer's connections (a node-postgres pool; see createIntakeSql). */
  sql: SqlExecutor;
  redis: Redis;
  queues: QueueFactory;
  log: Logger;
  clock: Clock;
}

export interface EmailIntake {
  deps: EmailIntakeDeps;
  domains: TeamDomains;
  committer: EmailCommitter;
}

/**
 * The committer's own node-postgres pool, one connection per statement it may have in flight
 * (EMAIL_COMMIT_CONCURRENCY), beside Prisma's pool: its two statements per flush skip Prisma's
 * argument handling, which the API and the relay would otherwise pay for every email. Closed by its owner.
 */
export function createIntakeSql(config: Pick<Config, 'DATABASE_URL' | 'EMAIL_COMMIT_CONCURRENCY'>, log: Logger): SqlPool {
  return createSqlPool(config.DATABASE_URL, Math.max(1, config.EMAIL_COMMIT_CONCURRENCY), (err) =>
    log.warn({ err }, 'idle PostgreSQL connection of the email committer lost'),
  );
}

/** One per process: the domain cache and the group committer are shared by all its requests. */
export function createEmailIntake(deps: EmailIntakeDeps): EmailIntake {
  return {
    deps,
    domains: createTeamDomains(deps.db, deps.clock),
    committer: createEmailCommitter(
      { sql: deps.sql, queues: deps.queues, log: deps.log, now: () => deps.clock.now() },
      { maxBatch: deps.config.EMAIL_COMMIT_MAX_BATCH, concurrency: deps.config.EMAIL_COMMIT_CONCURRENCY },
    ),
  };
}

/** Largest message (MIME as SES counts it, attachments base64) accepted: EMAIL_MAX_MESSAGE_MB. */
export const maxMessageBytes = (config: Pick<Config, 'EMAIL_MAX_MESSAGE_MB'>): number =>
  Math.floor(config.EMAIL_MAX_MESSAGE_MB * 1024 * 1024);

/** May this key send from `domainName` (lower-case)? A verified domain of its team, and its own domain when bound. */
export async function checkSender(intake: EmailIntake, auth: AuthContext, domainName: string): Promise<SenderDomainCheck<TeamDomain>> {
  return checkSenderDomain(await intake.domains.find(auth.teamId, domainName), domainName, auth.domainId);
}

/**
 * Builds the drafts (the door's own checks run there, before anything is written), then commits
 * them all (group-committed with concurrent sends) and enqueues them. Returns the email ids in
 * draft order. Nothing is written unless `build` succeeds. With an idempotency key, a replay of
 * the same `body` within 24 h answers the first ids without building or writing anything.
 */
export async function submitEmails(
  intake: EmailIntake,
  auth: AuthContext,
  input: { idempotencyKey: string | undefined; body: unknown; build: () => Promise<EmailDraft[]> },
): Promise<string[]> {
  const { config } = intake.deps;
  return withIdempotency(
    intake.deps,
    { prefix: config.REDIS_PREFIX, hashTags: config.redisHashTags, teamId: auth.teamId, key: input.idempotencyKey, body: input.body },
    async (claim) => {
      const drafts = await input.build();
      try {
        const created = await intake.committer.submit(drafts, claim);
        return created.map((c) => c.id);
      } catch (err) {
        // The only foreign key we can break is the domain: deleted since our cached lookup.
        if (foreignKeyViolation(err)) {
          intake.domains.forget(auth.teamId);
          throw badRequest('The domain of the from address no longer exists');
        }
        throw err;
      }
    },
  );
}

/** A foreign-key violation (SQLSTATE 23503), from the committer's pool or through Prisma. */
const foreignKeyViolation = (err: unknown) => hasSqlState(err, '23503');
