import { z } from 'zod';
import { EmailStatus } from '@mailrail/platform/db/generated/enums';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { isEmailAddress } from '@mailrail/domain/emails/address';
import { emailIdCreatedWithinSql } from '@mailrail/domain/sql/email-id-range';
import type { ApiDeps } from '../../deps';
import type { AuthContext } from '../../http/auth';
import { MAX_QUERY_VALUE_LENGTH } from '../../http/limits';
import { intString, isoDateTime } from '../../http/query';
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from '../../http/created-at-cursor';

// The Emails page's log: newest first on (createdAt, id), keyset-paged so page 1,000 costs what
// page 1 does, with filters that each have an index (docs/dashboard.md, "Email log at scale").
// No total count: counting a million rows is what makes such pages slow.

const MIN_SEARCH = 3; // trigrams: shorter terms cannot use the index
const MAX_SEARCH = 200;

/** One value or the parameter repeated (?status=A&status=B). */
const repeated = <T extends z.ZodType<unknown, string>>(item: T, max: number) =>
  z
    .union([z.string().max(MAX_QUERY_VALUE_LENGTH), z.array(z.string().max(MAX_QUERY_VALUE_LENGTH)).max(max)])
    .transform((v) => [...new Set(Array.isArray(v) ? v : [v])])
    .pipe(z.array(item));

export const emailLogQuery = z.object({
  status: repeated(z.enum(EmailStatus), Object.keys(EmailStatus).length).optional(),
  domainId: repeated(intString(1), 20).optional(),
  startDate: isoDateTime().optional(),
  endDate: isoDateTime().optional(),
  search: z
    .string()
    .max(MAX_SEARCH, `must be at most ${MAX_SEARCH} characters`)
    .transform((s) => s.trim().toLowerCase())
    .refine((s) => s.length === 0 || s.length >= MIN_SEARCH, `must be at least ${MIN_SEARCH} characters`)
    .optional(),
  limit: intString(1, 100).default(50),
  cursor: z.string().max(200).optional(),
});

export type EmailLogQuery = z.infer<typeof emailLogQuery>;

export interface EmailLogItem {
  id: string;
  from: string;
  to: string[];
  subject: string;
  latestStatus: EmailStatus;
  domainId: number | null;
  scheduledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `id, "from", "to", subject, "latestStatus", "domainId", "scheduledAt", "createdAt", "updatedAt"`;
const ORDER = `ORDER BY "createdAt" DESC, id DESC`;

/** LIKE's wildcards in a search term match themselves. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * One page of the team's emails. Several statuses (or domains) become one ordered, limited
 * branch per value, merged: each branch walks its own index in order, so the page never sorts
 * more than branches x limit rows whatever the table's size.
 */
export async function emailLogPage(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, q: EmailLogQuery) {
  const params: unknown[] = [auth.teamId];
  const p = (v: unknown) => `$${params.push(v)}`;
  const common: string[] = [`"teamId" = $1`];
  // A domain-bound caller sees its domain only (the dashboard never is one; kept for parity with the API).
  const domains = auth.domainId !== null ? [auth.domainId] : q.domainId;
  if (q.startDate) common.push(`"createdAt" >= ${p(q.startDate)}`);
  if (q.endDate) common.push(`"createdAt" < ${p(q.endDate)}`);
  if (q.search) {
    // A whole address: the emails sent to it (exact, through the array index). Anything else: a
    // substring of the subject or of a recipient (trigram index).
    if (isEmailAddress(q.search)) common.push(`"toAddresses" @> ARRAY[${p(q.search)}]::text[]`);
    else common.push(`"searchText" LIKE ${p(`%${likeEscape(q.search)}%`)}`);
  }
  const cursor = q.cursor ? decodeCreatedAtCursor(q.cursor) : null;
  if (cursor) common.push(`("createdAt", id) < (${p(cursor.createdAt)}, ${p(cursor.id)})`);
  // The same range on the id, so only the partitions of those days are read (a page after the
  // cursor holds emails created at or before the cursor's).
  const before = [q.endDate, cursor && new Date(cursor.createdAt.getTime() + 1)].filter((d): d is Date => !!d);
  common.push(
    emailIdCreatedWithinSql('id', { from: q.startDate, before: before.length ? new Date(Math.min(...before.map(Number))) : null }, p),
  );
  const take = q.limit + 1;
  const limit = p(take);

  let branches: string[][];
  if (q.status?.length) {
    const domainFilter = domains?.length ? [`"domainId" = ANY(${p(domains)}::int[])`] : [];
    branches = q.status.map((s) => [`"latestStatus" = ${p(s)}::"EmailStatus"`, ...domainFilter]);
  } else if (domains?.length) {
    branches = domains.map((d) => [`"domainId" = ${p(d)}`]);
  } else {
    branches = [[]];
  }
  const select = (extra: string[]) => `SELECT ${COLUMNS} FROM "Email" WHERE ${[...common, ...extra].join(' AND ')} ${ORDER} LIMIT ${limit}`;
  const sql =
    branches.length === 1 ? select(branches[0]) : `${branches.map((b) => `(${select(b)})`).join(' UNION ALL ')} ${ORDER} LIMIT ${limit}`;

  const rows = await prismaExecutor(deps.db).query<EmailLogItem>(sql, params);
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { data: page, nextCursor: rows.length > q.limit && last ? encodeCreatedAtCursor(last) : null };
}
