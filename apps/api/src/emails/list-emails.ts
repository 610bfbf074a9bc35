import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { EmailSource, type EmailStatus } from '@mailrail/platform/db/generated/enums';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { emailIdCreatedWithinSql } from '@mailrail/domain/sql/email-id-range';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { MAX_ID_LENGTH, MAX_QUERY_VALUE_LENGTH } from '../http/limits';
import { intString, isoDateTime, pageQuery } from '../http/query';

export const listEmailsQuery = z.object({
  ...pageQuery,
  startDate: isoDateTime().optional(),
  endDate: isoDateTime().optional(),
  // One value or the parameter repeated: ?domainId=1&domainId=2.
  domainId: z
    .union([z.string().max(MAX_QUERY_VALUE_LENGTH), z.array(z.string().max(MAX_QUERY_VALUE_LENGTH)).max(100)])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .pipe(z.array(intString(1)))
    .optional(),
  // Added to useSend's fields (mailrail): where the emails came from, and one campaign's emails.
  source: z
    .union([z.string().max(MAX_QUERY_VALUE_LENGTH), z.array(z.string().max(MAX_QUERY_VALUE_LENGTH)).max(Object.keys(EmailSource).length)])
    .transform((v) => [...new Set(Array.isArray(v) ? v : [v])])
    .pipe(z.array(z.enum(EmailSource)))
    .optional()
    .describe('Only emails from these sources (API, SMTP, CAMPAIGN, SYSTEM); repeat the parameter for several. A mailrail addition.'),
  campaignId: z
    .string()
    .max(MAX_ID_LENGTH)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be a campaign id')
    .optional()
    .describe("Only this campaign's emails; another team's campaign matches nothing. A mailrail addition."),
});

export type ListEmailsQuery = z.infer<typeof listEmailsQuery>;

/**
 * How much of the page's bodies is held at once. An email's html may be 40 MB and a page has up
 * to 100 of them, so bodies are never loaded together: small ones are read a few at a time, big
 * ones in pieces of `pieceChars` characters, each written out before the next is read.
 */
export interface ListStreamLimits {
  /** Characters per piece of a big body (substring() of the column). */
  pieceChars: number;
  /** Bodies (html + text, in bytes) up to this total are read together in one query. */
  batchBytes: number;
  /** Instrumentation: called with the length of every body piece read. */
  onPiece?: (chars: number) => void;
}

export const DEFAULT_LIST_STREAM_LIMITS: ListStreamLimits = { pieceChars: 1 << 20, batchBytes: 1 << 20 };

// The list item of useSend's wire format, in the order the fields are written.
const META_COLUMNS = `id, "to", "from", subject, "createdAt", "updatedAt", "latestStatus", "scheduledAt", "domainId", "replyTo", cc, bcc`;
interface ListRow {
  id: string;
  to: string[];
  from: string;
  subject: string;
  createdAt: Date;
  updatedAt: Date;
  latestStatus: EmailStatus;
  scheduledAt: Date | null;
  domainId: number | null;
  replyTo: string[];
  cc: string[];
  bcc: string[];
}
type BodyColumn = 'html' | 'text';
interface BodySize {
  id: string;
  html: number | null;
  text: number | null;
}

/** The client went away: stop reading bodies. */
class ClientGone extends Error {}

/**
 * GET /emails: newest first; `count` is the total matching, for pagination, up to
 * EMAIL_LIST_COUNT_CAP (past it: the cap and `countCapped: true`). The JSON is the one
 * `res.json({ data, count })` gave, but written as it is read, with backpressure: the page's
 * metadata first, then each body from PostgreSQL in bounded pieces. Errors before the first byte
 * are thrown (the usual error answer); after it the status is sent, so the socket is destroyed
 * and the error logged, and the client sees a truncated response instead of wrong JSON.
 */
export async function streamEmailList(
  deps: ApiDeps,
  auth: AuthContext,
  q: ListEmailsQuery,
  res: ServerResponse,
  limits: ListStreamLimits = DEFAULT_LIST_STREAM_LIMITS,
): Promise<void> {
  const filter = listFilter(auth, q);
  const [rows, count] = await Promise.all([listPage(deps, filter, q), countUpTo(deps, filter, deps.config.EMAIL_LIST_COUNT_CAP)]);
  const sizes = await bodySizes(
    deps,
    rows.map((r) => r.id),
  );

  let gone = res.destroyed;
  res.once('close', () => (gone = true));
  const write = async (chunk: string) => {
    if (gone) throw new ClientGone();
    if (!res.write(chunk)) await drained(res);
    if (gone) throw new ClientGone();
  };

  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  try {
    await write('{"data":[');
    let bodies = new Map<string, { html: string | null; text: string | null }>();
    for (const [i, row] of rows.entries()) {
      const size = sizes.get(row.id) ?? { id: row.id, html: null, text: null };
      if (!bodies.has(row.id) && bodyBytes(size) <= limits.batchBytes)
        bodies = await readSmallBodies(deps, batchFrom(rows.slice(i), sizes, limits), limits);
      const small = bodies.get(row.id);
      const { id, to, from, subject, createdAt, updatedAt, latestStatus, scheduledAt, domainId, replyTo, cc, bcc } = row;
      await write(`${i ? ',' : ''}{"id":${json(id)},"to":${json(to)},"from":${json(from)},"subject":${json(subject)},"html":`);
      await (small ? write(json(small.html)) : writeBody(deps, write, row.id, 'html', size.html, limits));
      await write(',"text":');
      await (small ? write(json(small.text)) : writeBody(deps, write, row.id, 'text', size.text, limits));
      await write(
        `,"createdAt":${json(createdAt)},"updatedAt":${json(updatedAt)},"latestStatus":${json(latestStatus)},"scheduledAt":${json(scheduledAt)}` +
          `,"domainId":${json(domainId)},"replyTo":${json(replyTo)},"cc":${json(cc)},"bcc":${json(bcc)}}`,
      );
      bodies.delete(row.id);
    }
    // Past the cap: the cap, flagged (docs/emails.md "List"); the field is absent otherwise, so the
    // answer stays useSend's {data, count} whenever the count is exact.
    await write(count.capped ? `],"count":${json(count.count)},"countCapped":true}` : `],"count":${json(count.count)}}`);
    res.end();
  } catch (err) {
    if (err instanceof ClientGone) {
      deps.log.info({ teamId: auth.teamId }, 'email list: client went away mid-answer; stopped reading');
      return;
    }
    // The 200 and part of the body are out: a clean error answer is no longer possible.
    deps.log.error({ err, teamId: auth.teamId }, 'email list failed mid-answer; connection closed');
    res.destroy();
  }
}

/** A SQL predicate on "Email" and its parameters ($1..$n); a statement adds its own after them. */
interface SqlFilter {
  sql: string;
  params: unknown[];
}

/**
 * The emails GET /emails answers, as one predicate: the page and its count are both built on it,
 * so they cannot disagree. A key bound to a domain sees that domain only, whatever the query asks.
 */
function listFilter(
  auth: AuthContext,
  q: Pick<ListEmailsQuery, 'domainId' | 'startDate' | 'endDate' | 'source' | 'campaignId'>,
): SqlFilter {
  const params: unknown[] = [];
  const p = (v: unknown) => `$${params.push(v)}`;
  const domainIds = auth.domainId !== null ? [auth.domainId] : q.domainId;
  const where = [`"teamId" = ${p(auth.teamId)}::int`];
  if (domainIds) where.push(`"domainId" = ANY(${p(domainIds)}::int[])`);
  if (q.startDate) where.push(`"createdAt" >= ${p(q.startDate)}::timestamptz`);
  if (q.endDate) where.push(`"createdAt" <= ${p(q.endDate)}::timestamptz`);
  // One source is an equality, so the (teamId, source, createdAt, id) index gives the rows in order.
  if (q.source?.length === 1) where.push(`source = ${p(q.source[0])}::"EmailSource"`);
  else if (q.source?.length) where.push(`source = ANY(${p(q.source)}::"EmailSource"[])`);
  // The team's condition above keeps another team's campaign out; its index is (campaignId, createdAt, id).
  // (An uncorrelated EXISTS is checked once, before any row is read.)
  if (q.campaignId) {
    const campaign = p(q.campaignId);
    where.push(`"campaignId" = ${campaign}`, `EXISTS (SELECT 1 FROM "Campaign" c WHERE c.id = ${campaign} AND c."teamId" = $1::int)`);
  }
  // The same range on the id (the partition key), so only the partitions of those days are read.
  where.push(emailIdCreatedWithinSql('id', { from: q.startDate, before: q.endDate && new Date(q.endDate.getTime() + 1) }, p));
  return { sql: where.join(' AND '), params };
}

/** The page's metadata, newest first (bodies are read later, piece by piece). */
function listPage(deps: ApiDeps, filter: SqlFilter, q: Pick<ListEmailsQuery, 'page' | 'limit'>): Promise<ListRow[]> {
  const params = [...filter.params];
  const p = (v: unknown) => `$${params.push(v)}`;
  return prismaExecutor(deps.db).query<ListRow>(
    `SELECT ${META_COLUMNS} FROM "Email" WHERE ${filter.sql} ORDER BY "createdAt" DESC, id DESC LIMIT ${p(q.limit)}::int OFFSET ${p((q.page - 1) * q.limit)}::bigint`,
    params,
  );
}

/**
 * The number of emails the filter matches, counted up to `cap`: a count(*) over a LIMIT subquery,
 * so a team with hundreds of millions of emails costs at most cap + 1 index entries. No ORDER BY
 * (which Prisma's count adds to a `take`), so the scan stops at cap + 1 whichever index it uses.
 */
async function countUpTo(deps: ApiDeps, filter: SqlFilter, cap: number): Promise<{ count: number; capped: boolean }> {
  const params = [...filter.params];
  const [row] = await prismaExecutor(deps.db).query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM "Email" WHERE ${filter.sql} LIMIT $${params.push(cap + 1)}::int) capped`,
    params,
  );
  return row.n > cap ? { count: cap, capped: true } : { count: row.n, capped: false };
}

const json = (v: unknown) => JSON.stringify(v);
const bodyBytes = (s: BodySize) => (s.html ?? 0) + (s.text ?? 0);

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

// octet_length reads the stored size without detoasting the value.
async function bodySizes(deps: ApiDeps, ids: string[]): Promise<Map<string, BodySize>> {
  if (ids.length === 0) return new Map();
  const rows = await prismaExecutor(deps.db).query<BodySize>(
    'SELECT id, octet_length(html)::int AS html, octet_length(text)::int AS text FROM "Email" WHERE id = ANY($1::text[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** The ids of the leading rows whose bodies together stay within batchBytes (at least the first). */
function batchFrom(rows: { id: string }[], sizes: Map<string, BodySize>, limits: ListStreamLimits): string[] {
  const ids: string[] = [];
  let total = 0;
  for (const { id } of rows) {
    const bytes = bodyBytes(sizes.get(id) ?? { id, html: null, text: null });
    if (bytes > limits.batchBytes || (ids.length > 0 && total + bytes > limits.batchBytes)) break;
    ids.push(id);
    total += bytes;
  }
  return ids;
}

async function readSmallBodies(deps: ApiDeps, ids: string[], limits: ListStreamLimits) {
  const rows = await prismaExecutor(deps.db).query<{ id: string; html: string | null; text: string | null }>(
    'SELECT id, html, text FROM "Email" WHERE id = ANY($1::text[])',
    [ids],
  );
  for (const r of rows) limits.onPiece?.((r.html?.length ?? 0) + (r.text?.length ?? 0));
  // A row deleted meanwhile reads as empty bodies rather than disappearing from a started answer.
  return new Map(ids.map((id) => [id, rows.find((r) => r.id === id) ?? { id, html: null, text: null }]));
}

/** One body as a JSON string, read and escaped piece by piece (pieces never split a character). */
async function writeBody(
  deps: ApiDeps,
  write: (s: string) => Promise<void>,
  id: string,
  column: BodyColumn,
  bytes: number | null,
  limits: ListStreamLimits,
) {
  if (bytes === null) return write('null');
  await write('"');
  for (let from = 1; ; from += limits.pieceChars) {
    const [row] = await prismaExecutor(deps.db).query<{ piece: string | null }>(
      `SELECT substring("${column}" FROM $2::int FOR $3::int) AS piece FROM "Email" WHERE id = $1`,
      [id, from, limits.pieceChars],
    );
    const piece = row?.piece ?? '';
    limits.onPiece?.(piece.length);
    if (piece) await write(json(piece).slice(1, -1));
    if (piece.length < limits.pieceChars) break;
  }
  await write('"');
}
