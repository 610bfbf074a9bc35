import { closeBaseDeps, createBaseDeps, type BaseDeps } from '@mailrail/platform/process/base-deps';
import type { Config } from '@mailrail/platform/config/schema';
import { createEmailIntake, type EmailIntake } from '@mailrail/domain/emails/email-intake';
import { createApiKeyVerifier, type ApiKeyVerifier } from '@mailrail/domain/teams/api-key-auth';
import { createTeamRateLimit, type TeamRateLimit } from '@mailrail/domain/teams/team-rate-limit';
import { createSmtpMetrics, type SmtpMetrics } from './smtp-metrics';

/** Everything a session may touch; built once per process (or per test file). */
export interface SmtpDeps extends BaseDeps {
  /** The API's key rule: caches, revocations, the per-IP failure limit. */
  verifier: ApiKeyVerifier;
  /** The API's email creation path: domain rule, idempotency, group committer. */
  intake: EmailIntake;
  /** The API's per-team rate, one request per message. */
  rate: TeamRateLimit;
  metrics: SmtpMetrics;
}

export function createSmtpDeps(config: Config, overrides: Partial<BaseDeps> & { metrics?: SmtpMetrics } = {}): SmtpDeps {
  const base = createBaseDeps(config, overrides, { service: 'mailrail-smtp' });
  const metrics = overrides.metrics ?? createSmtpMetrics();
  return {
    ...base,
    verifier: createApiKeyVerifier(base, metrics),
    intake: createEmailIntake(base),
    rate: createTeamRateLimit(base.redis, { prefix: config.REDIS_PREFIX, log: base.log }),
    metrics,
  };
}

export async function closeSmtpDeps(deps: SmtpDeps): Promise<void> {
  deps.verifier.close();
  await closeBaseDeps(deps);
}
