import { badRequest } from '@mailrail/domain/errors/api-error';
import { findVerifiedSenderDomain } from '@mailrail/domain/domains/sender-domain';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { storedSegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import {
  audienceProblems,
  contactVariablesUsed,
  contentProblems,
  missingVariableProblems,
  sortProblems,
  type PreSendAudience,
  type PreSendProblem,
} from '@mailrail/domain/campaigns/pre-send-check';
import { registryFallbacks } from '@mailrail/domain/audience/properties/contact-properties';
import { campaignRecipientCounts } from '@mailrail/domain/campaigns/recipient-outcomes';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { Campaign, Segment } from '@mailrail/platform/db/generated/client';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { evaluateSegment } from '../segments/bounded-query';

// The pre-send check (docs/campaigns.md "Pre-send check"): ONE function answers it for the
// dashboard's send dialog (GET /campaigns/{id}/check) and for the schedule and create-and-send
// paths, which refuse its errors and never its warnings. The audience is counted exactly, with the
// segment filter the engine prepares recipients with, under the team's segment budget and
// SEGMENT_QUERY_TIMEOUT_MS (docs/security.md "Resource budgets"): a big book cannot hold the pool.

export interface PreSendCheck {
  /** No error: scheduling or sending now is accepted (warnings may remain). */
  ready: boolean;
  audience: PreSendAudience & { contactBookId: string | null; segmentId: string | null };
  problems: PreSendProblem[];
}

/** What is checked: a stored campaign, or a create body about to be scheduled. */
export interface PreSendDraft {
  teamId: number;
  from: string;
  subject: string;
  previewText: string | null;
  html: string | null;
  contactBookId: string | null;
  segment: Segment | null;
  /** The started campaign's own row (its audience is fixed), or null before it starts. */
  started: Pick<Campaign, 'id' | 'total' | 'sent' | 'recipientsReadyAt'> | null;
}

export async function checkBeforeSending(deps: ApiDeps, auth: AuthContext, draft: PreSendDraft): Promise<PreSendCheck> {
  const problems = contentProblems(draft);
  const sender = await findVerifiedSenderDomain(deps.db, draft.teamId, draft.from, auth.domainId);
  if (!sender.ok) problems.push({ rule: 'senderDomain', severity: 'error', field: 'from', message: sender.message });

  const segmentId = draft.segment?.id ?? null;
  let audience: PreSendAudience = { subscribed: 0, suppressed: 0, unsubscribed: 0, recipients: 0, fixed: false };
  if (!draft.contactBookId) {
    problems.push({ rule: 'audience', severity: 'error', field: 'contactBookId', message: 'No contact book found for campaign' });
  } else if (draft.started?.recipientsReadyAt) {
    audience = await fixedAudience(deps, draft.started);
  } else {
    const variables = withRegistryFallbacks(contactVariablesUsed(draft), await bookFallbacks(deps, draft.contactBookId));
    const counted = await countAudience(deps, draft.teamId, draft.contactBookId, draft.segment, variables);
    audience = counted.audience;
    problems.push(...audienceProblems(audience, segmentId !== null), ...missingVariableProblems(counted.missingVariables));
  }
  const sorted = sortProblems(problems);
  return {
    ready: !sorted.some((p) => p.severity === 'error'),
    audience: { ...audience, contactBookId: draft.contactBookId, segmentId },
    problems: sorted,
  };
}

/** The book's registry fallbacks by lower-cased name (the renderer falls back to them as it does to a placeholder's own). */
async function bookFallbacks(deps: ApiDeps, contactBookId: string): Promise<Set<string>> {
  const rows = await deps.db.contactProperty.findMany({ where: { contactBookId }, select: { name: true, fallback: true } });
  return new Set(Object.keys(registryFallbacks(rows)).map((name) => name.toLowerCase()));
}

/** A variable without a fallback of its own has one when the book's registry gives it one. */
const withRegistryFallbacks = (variables: { name: string; hasFallback: boolean }[], registry: Set<string>) =>
  variables.map((v) => ({ ...v, hasFallback: v.hasFallback || registry.has(v.name.toLowerCase()) }));

/** A started campaign's audience is its recipient rows: what is left to send and what was skipped. */
async function fixedAudience(deps: ApiDeps, c: NonNullable<PreSendDraft['started']>): Promise<PreSendAudience> {
  const counts = await campaignRecipientCounts(prismaExecutor(deps.db), c);
  const suppressed = counts?.suppressed ?? 0;
  return {
    subscribed: c.total,
    suppressed,
    unsubscribed: counts?.unsubscribed ?? 0,
    recipients: Math.max(0, c.total - suppressed - (counts?.unsubscribed ?? 0) - (counts?.failed ?? 0)),
    fixed: true,
  };
}

/**
 * The audience as the engine would fix it now (prepare-recipients.ts: the book's subscribed
 * contacts the segment matches, suppressed addresses recorded and skipped), and which of `variables`
 * no contact of it has a non-empty property for; one transaction in one place of the segment budget.
 */
async function countAudience(
  deps: ApiDeps,
  teamId: number,
  contactBookId: string,
  segment: Segment | null,
  variables: { name: string; hasFallback: boolean }[],
): Promise<{ audience: PreSendAudience; missingVariables: typeof variables }> {
  const filter = segment ? storedSegmentFilter(segment.filter) : null;
  const params: unknown[] = [contactBookId];
  const inSegment = filter ? ` AND ${segmentFilterSql(filter, 'c', { teamId, now: deps.clock.now() }, params)}` : '';
  // The team is the count's parameter only: the variables' statement takes the others and its names.
  const segmentParams = [...params];
  const team = `$${params.push(teamId)}`;
  return evaluateSegment(deps, teamId, filter, 'SEGMENT_QUERY_TIMEOUT_MS', async (sql) => {
    const [counts] = await sql.query<{ subscribed: number; suppressed: number; unsubscribed: number }>(
      `SELECT (count(*) FILTER (WHERE c.subscribed))::int AS subscribed,
              (count(*) FILTER (WHERE c.subscribed AND s.id IS NOT NULL))::int AS suppressed,
              (count(*) FILTER (WHERE NOT c.subscribed))::int AS unsubscribed
         FROM "Contact" c
         -- Suppressions are stored lower-cased, as preparation looks them up.
         LEFT JOIN "Suppression" s ON s."teamId" = ${team} AND s.email = lower(c.email)
        WHERE c."contactBookId" = $1${inSegment}`,
      params,
    );
    let missingVariables: typeof variables = [];
    if (variables.length && counts.subscribed > counts.suppressed) {
      const names = `$${segmentParams.push(variables.map((v) => v.name))}`;
      const rows = await sql.query<{ name: string }>(
        `SELECT v.name FROM unnest(${names}::text[]) AS v(name)
          WHERE NOT EXISTS (
            SELECT 1 FROM "Contact" c
             WHERE c."contactBookId" = $1 AND c.subscribed${inSegment}
               AND jsonb_typeof(c.properties) = 'object'
               AND EXISTS (SELECT 1 FROM jsonb_each_text(c.properties) p WHERE lower(p.key) = lower(v.name) AND p.value <> ''))`,
        segmentParams,
      );
      const missing = new Set(rows.map((r) => r.name));
      missingVariables = variables.filter((v) => missing.has(v.name));
    }
    const audience = { ...counts, recipients: counts.subscribed - counts.suppressed, fixed: false };
    return { audience, missingVariables };
  });
}

/**
 * Refuses (400) a campaign whose check found an error: the message is the first error's (the ones
 * the schedule path answered before the check existed keep their wording), every error an issue.
 */
export function requireReadyToSend(check: PreSendCheck): void {
  const errors = check.problems.filter((p) => p.severity === 'error');
  if (!errors.length) return;
  throw badRequest(
    errors.length === 1 ? errors[0].message : `${errors[0].message} (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})`,
    errors.map((p) => ({ path: [p.field], message: p.message })),
  );
}
