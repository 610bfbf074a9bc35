import { emailIdPrefixAt, LEGACY_EMAIL_IDS_FROM, TIME_ORDERED_EMAIL_IDS_FROM } from '@mailrail/platform/ids';

// "Email" is partitioned by id and "EmailEvent" by "emailId", one partition per UTC day, because an
// email id starts with the instant it was minted at, the very instant written to its "createdAt"
// (create-emails.ts). A query that filters on "createdAt" therefore adds this id range: the planner
// reads the partitions of those days, plus "Email_legacy" and the DEFAULT partition, which hold ids
// that are not time-ordered (docs/email-log.md).

export interface CreatedWithin {
  /** Inclusive. */
  from?: Date | null;
  /** Exclusive. */
  before?: Date | null;
}

/**
 * A predicate on `column` (an email id) that holds for every email whose createdAt is in the range
 * (`TRUE` when the range is open on both ends). `param` adds a parameter and answers its placeholder.
 */
export function emailIdCreatedWithinSql(column: string, range: CreatedWithin, param: (value: string) => string): string {
  const bounds = emailIdBounds(range);
  if (!bounds) return 'TRUE';
  const within = [bounds.gte && `${column} >= ${param(bounds.gte)}`, bounds.lt && `${column} < ${param(bounds.lt)}`]
    .filter(Boolean)
    .join(' AND ');
  return `(${within} OR ${column} < '${TIME_ORDERED_EMAIL_IDS_FROM}' OR ${column} >= '${LEGACY_EMAIL_IDS_FROM}')`;
}

function emailIdBounds(range: CreatedWithin): { gte?: string; lt?: string } | null {
  if (!range.from && !range.before) return null;
  return {
    ...(range.from ? { gte: emailIdPrefixAt(range.from.getTime()) } : {}),
    ...(range.before ? { lt: emailIdPrefixAt(range.before.getTime()) } : {}),
  };
}
