import { z } from 'zod';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from '../http/created-at-cursor';
import { intString, isoDateTime } from '../http/query';

// GET /api/v1/logs: the team's request log, newest first, paged by (createdAt, id) like the email
// log. "RequestLog" is partitioned by day of createdAt (docs/request-log.md): the date range and
// the cursor bound createdAt, so a page reads only the days it can hold. Resend's logs API is the model (useSend has none); the filters are the ones a reader needs
// to find "what did my integration send, and what did we answer".

const PATH_PREFIX_MAX = 200;
const CURSOR_MAX = 200;

export const listLogsQuery = z.object({
  limit: intString(1, 100).default(50).describe('Entries per page (at most 100)'),
  cursor: z.string().max(CURSOR_MAX).optional().describe("`nextCursor` of the previous page: the entries older than that page's"),
  status: z.enum(['2xx', '3xx', '4xx', '5xx']).optional().describe('Only answers of this status class'),
  path: z
    .string()
    .max(PATH_PREFIX_MAX)
    .startsWith('/', 'must start with /')
    .optional()
    .describe('Only requests whose path starts with this (`/api/v1/emails`); for SMTP entries the step (`/smtp/DATA`)'),
  apiKeyId: intString(1).optional().describe('Only requests made with this key'),
  startDate: isoDateTime().optional().describe('Only entries at or after this instant'),
  endDate: isoDateTime().optional().describe('Only entries before this instant'),
});

export type ListLogsQuery = z.infer<typeof listLogsQuery>;

interface LogRow {
  id: string;
  createdAt: Date;
  source: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
  apiKeyId: number | null;
  apiKeyName: string | null;
  requestBody: unknown;
}

/** LIKE's own characters in a prefix, escaped, so the prefix is matched as written. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A key bound to a domain sees only its own requests (the log holds other keys' bodies); an
 * unbound key and a dashboard session see the whole team's.
 */
export async function listLogs(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, q: ListLogsQuery) {
  const params: unknown[] = [auth.teamId];
  const p = (v: unknown) => `$${params.push(v)}`;
  const where = [`l."teamId" = $1`];
  if (auth.domainId !== null) where.push(`l."apiKeyId" = ${p(auth.apiKeyId)}`);
  if (q.apiKeyId !== undefined) where.push(`l."apiKeyId" = ${p(q.apiKeyId)}`);
  if (q.status) {
    const low = Number(q.status[0]) * 100;
    where.push(`l.status >= ${p(low)} AND l.status < ${p(low + 100)}`);
  }
  if (q.path) where.push(`l.path LIKE ${p(likePrefix(q.path))}`);
  if (q.startDate) where.push(`l."createdAt" >= ${p(q.startDate)}`);
  if (q.endDate) where.push(`l."createdAt" < ${p(q.endDate)}`);
  if (q.cursor) {
    const cursor = decodeCreatedAtCursor(q.cursor);
    // Our ids are bigints: anything else did not come from a previous page.
    if (!/^\d{1,19}$/.test(cursor.id)) decodeCreatedAtCursor('not ours');
    const createdAt = p(cursor.createdAt);
    // The plain bound on createdAt is what PostgreSQL prunes the day partitions by (not the row comparison).
    where.push(`l."createdAt" <= ${createdAt}`, `(l."createdAt", l.id) < (${createdAt}, ${p(cursor.id)}::bigint)`);
  }
  const rows = await prismaExecutor(deps.db).query<LogRow>(
    `SELECT l.id::text AS id, l."createdAt", l.source, l.method, l.path, l.status, l."errorCode", l."errorMessage",
            l."durationMs", l."apiKeyId", k.name AS "apiKeyName", l."requestBody"
       FROM "RequestLog" l LEFT JOIN "ApiKey" k ON k.id = l."apiKeyId" AND k."teamId" = l."teamId"
      WHERE ${where.join(' AND ')}
      ORDER BY l."createdAt" DESC, l.id DESC
      LIMIT ${p(q.limit + 1)}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    data: page.map((r) => ({
      id: r.id,
      createdAt: r.createdAt.toISOString(),
      source: r.source,
      method: r.method,
      path: r.path,
      status: r.status,
      error: r.errorCode === null ? null : { code: r.errorCode, message: r.errorMessage ?? '' },
      durationMs: r.durationMs,
      apiKey: r.apiKeyId === null ? null : { id: r.apiKeyId, name: r.apiKeyName },
      requestBody: r.requestBody,
    })),
    nextCursor: rows.length > q.limit && last ? encodeCreatedAtCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}
