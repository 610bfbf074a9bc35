import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { listLogs, listLogsQuery } from './list-logs';

const logEntry = z.object({
  id: z.string(),
  createdAt: z.string().describe('When the request arrived'),
  source: z.enum(['api', 'smtp']),
  method: z.string().describe('The HTTP method, or the SMTP command'),
  path: z.string().describe('The path without its query string'),
  status: z.number().int().describe('The status answered (499: the client went away first)'),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe('The error answered, in the error shape of every route'),
  durationMs: z.number().int(),
  apiKey: z
    .object({ id: z.number().int(), name: z.string().nullable().describe('null once the key is deleted') })
    .nullable()
    .describe('The key of the request (never its secret); null for a dashboard session'),
  requestBody: z
    .unknown()
    .describe(
      'The JSON body, redacted: secret-looking fields replaced, attachment contents dropped, strings cut to 300 characters, at most 8 KB; null when there was none',
    ),
});

const route = declareRoute<ApiDeps>();

export const requestLogRoutes = [
  route({
    method: 'get',
    path: '/api/v1/logs',
    tag: 'Logs',
    summary: "The team's request log",
    description:
      "mailrail's addition to the useSend API, modelled on Resend's logs API (useSend has none): the team's API requests, newest first, kept REQUEST_LOG_RETENTION_DAYS days. " +
      'Entries are written in batches about a second after the request. A request refused before its key is known (no key: 401; an unknown or revoked key: 403) has no team and is not logged. ' +
      "A key bound to a domain sees only its own requests; an unbound key sees the whole team's. Not for SENDING keys.",
    query: listLogsQuery,
    response: z.object({
      data: z.array(logEntry),
      nextCursor: z.string().nullable().describe('Pass as `cursor` for older entries; null on the last page'),
    }),
    errors: [],
    handle: (deps, { auth, query }) => listLogs(deps, auth, query),
  }),
];
