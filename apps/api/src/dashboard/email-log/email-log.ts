import { z } from 'zod';
import { EmailSource, EmailStatus } from '@mailrail/platform/db/generated/enums';
import { prismaExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { isEmailAddress } from '@mailrail/domain/emails/address';
import { emailIdCreatedWithinSql } from '@mailrail/domain/sql/email-id-range';
import type { ApiDeps } from '../../deps';
import type { AuthContext } from '../../http/auth';
import { MAX_ID_LENGTH, MAX_QUERY_VALUE_LENGTH } from '../../http/limits';
import { intString, isoDateTime } from '../../http/query';
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from '../../http/created-at-cursor';
import { estimatedRowCount } from '../../http/estimated-count';

// The Emails page's log: newest first on (createdAt, id), keyset-paged so page 1,000 costs what
// page 1 does, with filters that each have an index (docs/dashboard.md, "Email log at scale").
// No exact total: counting a million rows is what makes such pages slow. The first page carries
// the planner's estimate instead (estimatedTotal), which the page shows as "about".

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
  source: repeated(z.enum(EmailSource), Object.keys(EmailSource).length).optional(),
  campaignId: z
    .string()
    .max(MAX_ID_LENGTH)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be a campaign id')
    .optional(),
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
  source: EmailSource;
  domainId: number | null;
  campaignId: string | null;
  scheduledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `id, "from", "to", subject, "latestStatus", source, "domainId", "campaignId", "scheduledAt", "createdAt", "updatedAt"`;
const ORDER = `ORDER BY "createdAt" DESC, id DESC`;

/** LIKE's wildcards in a search term match themselves. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A statement's parameters and the placeholder of each value added. */
function sqlParams(first: unknown[]) {
  const params = [...first];
  return { params, p: (v: unknown) => `$${params.push(v)}` };
}

/** The filters every branch shares (team, dates, search, campaign), without the page's cursor. */
function sharedFilters(q: EmailLogQuery, p: (v: unknown) => string): string[] {
  const where: string[] = [`"teamId" = $1`];
  if (q.startDate) where.push(`"createdAt" >= ${p(q.startDate)}`);
  if (q.endDate) where.push(`"createdAt" < ${p(q.endDate)}`);
  if (q.search) {
    // A whole address: the emails sent to it (exact, through the array index). Anything else: a
    // substring of the subject or of a recipient (trigram index).
    if (isEmailAddress(q.search)) where.push(`"toAddresses" @> ARRAY[${p(q.search)}]::text[]`);
    else where.push(`"searchText" LIKE ${p(`%${likeEscape(q.search)}%`)}`);
  }
  if (q.campaignId) where.push(`"campaignId" = ${p(q.campaignId)}`);
  return where;
}

// A domain-bound caller sees its domain only (the dashboard never is one; kept for parity with the API).
const domainsOf = (auth: AuthContext, q: EmailLogQuery) => (auth.domainId !== null ? [auth.domainId] : q.domainId);

/**
 * One page of the team's emails. A campaign walks its own index (campaignId, createdAt, id);
 * otherwise several statuses (or sources, or domains) become one ordered, limited branch per
 * value, merged: each branch walks its own index in order, so the page never sorts more than
 * branches x limit rows whatever the table's size. The other filters check the rows walked.
 * Page 1 carries the planner's estimate of the emails matching (estimatedTotal), exact when they
 * all fit on it.
 */
export async function emailLogPage(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, q: EmailLogQuery) {
  // Another team's campaign: nothing, without walking that campaign's emails to find it out.
  if (q.campaignId && !(await deps.db.campaign.findFirst({ where: { id: q.campaignId, teamId: auth.teamId }, select: { id: true } })))
    return { data: [] as EmailLogItem[], nextCursor: null, ...(q.cursor ? {} : { estimatedTotal: 0 }) };
  const sql = prismaExecutor(deps.db);
  const [page, estimatedTotal] = await Promise.all([
    pageOf(sql, auth, q),
    // Later pages keep the figure the first one gave.
    q.cursor ? undefined : estimateMatching(sql, auth, q),
  ]);
  if (estimatedTotal === undefined) return page;
  // What the page itself shows beats the statistics: everything fits on page 1 (exact), or at
  // least one more page follows (stale statistics, fresh partitions, can say far less).
  return { ...page, estimatedTotal: page.nextCursor ? Math.max(estimatedTotal, q.limit + 1) : page.data.length };
}

/** The planner's estimate of the emails the filters match (no count: see estimated-count.ts). */
function estimateMatching(sql: SqlExecutor, auth: AuthContext, q: EmailLogQuery): Promise<number> {
  const { params, p } = sqlParams([auth.teamId]);
  const domains = domainsOf(auth, q);
  const where = sharedFilters(q, p);
  if (q.status?.length) where.push(`"latestStatus" = ANY(${p(q.status)}::"EmailStatus"[])`);
  if (q.source?.length) where.push(`source = ANY(${p(q.source)}::"EmailSource"[])`);
  if (domains?.length) where.push(`"domainId" = ANY(${p(domains)}::int[])`);
  where.push(emailIdCreatedWithinSql('id', { from: q.startDate, before: q.endDate ?? null }, p));
  return estimatedRowCount(sql, `SELECT 1 FROM "Email" WHERE ${where.join(' AND ')}`, params);
}

async function pageOf(sqlExec: SqlExecutor, auth: AuthContext, q: EmailLogQuery) {
  const { params, p } = sqlParams([auth.teamId]);
  const domains = domainsOf(auth, q);
  const common = sharedFilters(q, p);
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

  // One dimension branches (one value each); the others are checked on the rows its index gives.
  const statusFilter = () => (q.status?.length ? [`"latestStatus" = ANY(${p(q.status)}::"EmailStatus"[])`] : []);
  const sourceFilter = () => (q.source?.length ? [`source = ANY(${p(q.source)}::"EmailSource"[])`] : []);
  const domainFilter = () => (domains?.length ? [`"domainId" = ANY(${p(domains)}::int[])`] : []);
  let branches: string[][];
  if (q.campaignId) {
    branches = [[...statusFilter(), ...sourceFilter(), ...domainFilter()]];
  } else if (q.status?.length) {
    const others = [...sourceFilter(), ...domainFilter()];
    branches = q.status.map((s) => [`"latestStatus" = ${p(s)}::"EmailStatus"`, ...others]);
  } else if (q.source?.length) {
    const others = domainFilter();
    branches = q.source.map((s) => [`source = ${p(s)}::"EmailSource"`, ...others]);
  } else if (domains?.length) {
    branches = domains.map((d) => [`"domainId" = ${p(d)}`]);
  } else {
    branches = [[]];
  }
  const select = (extra: string[]) => `SELECT ${COLUMNS} FROM "Email" WHERE ${[...common, ...extra].join(' AND ')} ${ORDER} LIMIT ${limit}`;
  const sql =
    branches.length === 1 ? select(branches[0]) : `${branches.map((b) => `(${select(b)})`).join(' UNION ALL ')} ${ORDER} LIMIT ${limit}`;

  const rows = await sqlExec.query<EmailLogItem>(sql, params);
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { data: page, nextCursor: rows.length > q.limit && last ? encodeCreatedAtCursor(last) : null };
}
