// Scenarios on the HTTP surface, with routes read from the API's own OpenAPI document.
import { startStack, type ScenarioResult, type Stack, type Team } from './stack';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export interface Route {
  method: Method;
  path: string;
  hasBody: boolean;
}

export async function openApiRoutes(stack: Stack): Promise<Route[]> {
  const doc = (await (await fetch(`${stack.apiUrl}/api/v1/doc`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: unknown }>>;
  };
  const routes: Route[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      // Paths under /api/v1 are written relative to it, like the rest of this file.
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method))
        routes.push({ method: method as Method, path: path.replace(/^\/api\/v1(?=\/)/, ''), hasBody: !!op.requestBody });
    }
  }
  return routes;
}

export async function call(stack: Stack, team: Team, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.apiUrl}${path.startsWith('/api') ? '' : '/api/v1'}${path}`, {
    method: method.toUpperCase(),
    // A FormData body gets its multipart Content-Type (with the boundary) from fetch.
    headers: {
      ...team.auth,
      ...(body === undefined || body instanceof FormData ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : body instanceof FormData || typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  // Scenarios read whatever fields they probe; typing every answer adds nothing to a fault check.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, json: json as Record<string, any> | null, text };
}

/** Rows in every table of the public schema. */
export async function rowCounts(stack: Stack): Promise<Record<string, number>> {
  const tables = await stack.db.$queryRawUnsafe<{ t: string }[]>(
    `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations' ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { t } of tables) {
    const [{ n }] = await stack.db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${t}"`);
    counts[t] = n;
  }
  return counts;
}

// Tables that record requests, not data: the request log keeps every /api/v1 request of a known
// team, refused ones included (docs/request-log.md), so it grows whatever a request did. It is
// partitioned by day: "RequestLog_default", "RequestLog_p20261207", ...
const isRequestRecord = (table: string) => table === 'RequestLog' || table.startsWith('RequestLog_');

/** The data tables whose row count differs, as `table:before->after`. */
export function countDiff(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys({ ...before, ...after })
    .filter((t) => !isRequestRecord(t) && before[t] !== after[t])
    .map((t) => `${t}:${before[t] ?? 0}->${after[t] ?? 0}`);
}

/** One of each resource for a team, through the API; the ids by path-parameter meaning. */
export async function createResources(stack: Stack, team: Team) {
  const must = async (method: string, path: string, body: unknown) => {
    const r = await call(stack, team, method, path, body);
    if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status} ${r.text.slice(0, 200)}`);
    return r.json!;
  };
  const email = await must('post', '/emails', {
    from: `A <a@${team.domain.name}>`,
    to: 'someone@example.org',
    subject: 'Later',
    text: 'later',
    scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
  });
  const template = await must('post', '/templates', { name: 'T', subject: 'S', html: '<p>x</p>' });
  const book = await must('post', '/contactBooks', { name: 'Book' });
  const contact = await must('post', `/contactBooks/${book.id}/contacts`, { email: 'member@example.org' });
  const hook = await must('post', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['email.sent'] });
  await must('post', '/suppressions', { email: 'blocked@example.org' });
  const campaign = await must('post', '/campaigns', {
    name: 'C',
    from: `A <news@${team.domain.name}>`,
    subject: 'S',
    contactBookId: book.id,
    html: '<a href="{{usesend_unsubscribe_url}}">unsubscribe</a>',
  });
  const segment = await must('post', `/contactBooks/${book.id}/segments`, {
    name: 'Members',
    filter: { match: 'all', conditions: [{ field: 'email', operator: 'endsWith', value: '@example.org' }] },
  });
  const importId = await createImport(stack, team, book.id as string);
  const event = await must('post', '/events', { name: 'signed_up', contactId: contact.contactId ?? contact.id });
  const automation = await must('post', '/automations', {
    name: 'A',
    trigger: { type: 'event', event: 'signed_up' },
    steps: [{ id: 'hi', type: 'sendEmail', from: `A <a@${team.domain.name}>`, subject: 'Hi', html: '<p>Hi</p>' }],
  });
  return {
    automationId: automation.id as string,
    // No worker runs here, so the automation has no run: the automation's ownership check refuses first.
    runId: 'no-run',
    // GET /events/{eventId} takes mailrail's id of the event.
    eventId: event.id as string,
    emailId: email.emailId as string,
    segmentId: segment.id as string,
    importId,
    templateId: (template.id ?? template.templateId) as string,
    contactBookId: book.id as string,
    contactId: (contact.contactId ?? contact.id) as string,
    webhookId: String(hook.id ?? hook.webhookId),
    campaignId: campaign.id as string,
    domainId: String(team.domain.id),
    email: 'blocked@example.org',
    // An address A suppressed and wrote to: GET /addresses/{address} is B's view of any address.
    address: 'blocked@example.org',
  };
}

/**
 * A one-row CSV import. The scenarios that probe routes run no worker, so it stays queued and moves
 * no row count while they check that nothing changed.
 */
/** An import upload's body: multipart/form-data with the CSV in its `file` part. */
function csvUpload(csv: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'one.csv');
  return form;
}

async function createImport(stack: Stack, team: Team, bookId: string): Promise<string> {
  const res = await call(stack, team, 'post', `/contactBooks/${bookId}/imports`, csvUpload('email\nimported@example.org\n'));
  const started = res.json as { id?: string } | null;
  if (res.status !== 202 || !started?.id) throw new Error(`POST imports → ${res.status}`);
  return started.id;
}

export function fillPath(path: string, ids: Awaited<ReturnType<typeof createResources>>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'id') return path.startsWith('/domains') ? ids.domainId : ids.webhookId;
    const v = (ids as Record<string, string>)[name];
    if (v === undefined) throw new Error(`no id for {${name}} in ${path}`);
    return encodeURIComponent(v);
  });
}

/** A body valid enough that only ownership can refuse it. */
function plausibleBody(route: Route, ids: Awaited<ReturnType<typeof createResources>>): unknown {
  if (!route.hasBody) return undefined;
  if (route.path.endsWith('/contacts/bulk'))
    return route.method === 'delete' ? { contactIds: [ids.contactId] } : [{ email: 'intruder@example.org' }];
  if (route.method === 'put' && route.path.includes('/contacts/')) return { email: 'intruder@example.org' };
  if (route.path.startsWith('/emails/')) return { scheduledAt: new Date(Date.now() + 3_600_000).toISOString() };
  if (route.path.startsWith('/webhooks/')) return { description: 'taken over' };
  if (route.path.startsWith('/automations/'))
    return route.path.endsWith('/dry-run') ? { contactId: ids.contactId } : { name: 'taken over' };
  const filter = { match: 'all', conditions: [{ field: 'email', operator: 'contains', value: '@' }] };
  if (route.path.endsWith('/segments') || route.path.endsWith('/segments/preview')) return { name: 'taken over', filter };
  if (route.path.endsWith('/imports/preview')) return 'email\nintruder@example.org\n';
  // The upload is multipart: a JSON body is refused for its type before the book is looked up.
  if (route.method === 'post' && route.path.endsWith('/imports')) return csvUpload('email\nintruder@example.org\n');
  if (route.path.endsWith('/test')) return { to: 'intruder@example.org' };
  if (route.path.endsWith('/properties')) return { properties: [{ name: 'takenOver', type: 'string', fallback: '' }] };
  if (route.path.includes('/contacts/')) return { firstName: 'Mallory' };
  if (route.path.startsWith('/contacts') || route.path.endsWith('/contacts')) return { email: 'intruder@example.org' };
  return { name: 'taken over', subject: 'taken over' };
}

/**
 * What another team may answer for a route: 404 for a route whose parameter is an id of A's; for
 * an address (not owned by a team: B may look up any address in its own data), 200 with nothing of
 * A's in it.
 */
function refusedToOtherTeam(route: Route, r: Awaited<ReturnType<typeof call>>): boolean {
  if (route.path.includes('{address}')) {
    const b = r.json;
    return r.status === 200 && b?.suppression === null && b?.contacts?.length === 0 && b?.messages?.length === 0;
  }
  return r.status === 404 && r.json?.error?.code === 'NOT_FOUND';
}

/** 7. Every route with a path parameter, called with another team's ids: all 404 (an address: nothing of A's), nothing changed. */
export async function crossTeamMatrix(): Promise<ScenarioResult> {
  const stack = await startStack('s7', { WEBHOOK_ALLOW_PRIVATE: 'true' });
  try {
    await stack.startApi();
    const teamB = await stack.addTeam('Team B', 'b.example.com');
    const ids = await createResources(stack, stack.team);
    const routes = (await openApiRoutes(stack)).filter((r) => r.path.includes('{'));
    const before = await rowCounts(stack);
    const wrong: string[] = [];
    for (const route of routes) {
      const path = fillPath(route.path, ids);
      const body = plausibleBody(route, ids);
      const r = await call(stack, teamB, route.method, path, body, typeof body === 'string' ? { 'Content-Type': 'text/csv' } : {});
      if (!refusedToOtherTeam(route, r)) wrong.push(`${route.method.toUpperCase()} ${route.path}=${r.status}`);
    }
    const changed = countDiff(before, await rowCounts(stack));
    // Team A still sees its own resources unchanged.
    const own = await call(stack, stack.team, 'get', `/emails/${ids.emailId}`);
    const pass = wrong.length === 0 && changed.length === 0 && own.status === 200 && routes.length > 10;
    return {
      pass,
      figures: `routes=${routes.length} not_404=${wrong.length}${wrong.length ? ` [${wrong.join(' ')}]` : ''} tables_changed=${changed.length}${changed.length ? ` [${changed.join(' ')}]` : ''}`,
    };
  } finally {
    await stack.close();
  }
}

const FIELD_NAMES = [
  'from',
  'to',
  'cc',
  'bcc',
  'replyTo',
  'subject',
  'html',
  'text',
  'scheduledAt',
  'templateId',
  'variables',
  'attachments',
  'headers',
  'name',
  'email',
  'firstName',
  'lastName',
  'properties',
  'subscribed',
  'url',
  'events',
  'domainIds',
  'description',
  'enabled',
  'region',
  'reason',
  'doubleOptInEnabled',
  'content',
  'inReplyToId',
  'clickTracking',
  'openTracking',
];

function deepJson(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Hand-written nasties: huge, deep, wrongly typed, badly encoded, injected. */
function nasties(): { body?: string; headers?: Record<string, string>; pathId?: string; query?: string }[] {
  const huge = 'x'.repeat(2_000_000);
  return [
    { body: JSON.stringify({ subject: huge, from: huge, to: huge, name: huge, email: huge, url: huge }) },
    { body: deepJson(5_000) },
    { body: deepJson(100_000) },
    { body: `{"a":${deepJson(20_000)}}` },
    { body: '{"from": "a@b.c", "to": ' },
    { body: 'not json at all' },
    { body: '\u0000\u0001\u0002' },
    {
      body: JSON.stringify({
        to: ['a@b.c\r\nBcc: victim@example.org'],
        from: 'x@y.z\r\nX-Injected: 1',
        subject: 'hi\r\nBcc: v@example.org',
      }),
    },
    { body: JSON.stringify({ email: '𝓊𝓃𝒾𝒸ℴ𝒹ℯ@例え.テスト', name: '\u202e\u0000\ud800', url: 'javascript:alert(1)' }) },
    { body: JSON.stringify({ __proto__: { admin: true }, constructor: { prototype: { x: 1 } } }) },
    { body: JSON.stringify({ email: null, name: null, to: null, from: null }) },
    { body: JSON.stringify({ scheduledAt: 'tomorrow at 25:99', to: Array(10_000).fill('a@b.c') }) },
    { headers: { 'Idempotency-Key': 'k'.repeat(10_000) } },
    { headers: { 'Content-Type': 'text/plain' }, body: '{"name":"x"}' },
    { headers: { 'Content-Type': 'application/json; charset=utf-7' }, body: '{"name":"x"}' },
    { headers: { Authorization: 'Bearer us_\u00ff\u00fe_\u00e9' } },
    { headers: { Authorization: 'Bearer ' + 'a'.repeat(8000) } },
    { pathId: '../../../etc/passwd' },
    { pathId: "1' OR '1'='1" },
    { pathId: '%00' },
    { pathId: '9'.repeat(400) },
    { pathId: '-1' },
    { pathId: '1.5e308' },
    { pathId: '😀'.repeat(50) },
    { query: 'page=-1&limit=99999999999999999999&status[]=x&days=NaN' },
    { query: 'page[$gt]=1&limit=__proto__&emailIds=' + 'x,'.repeat(5000) },
  ];
}

/** 6. Malformed requests on every route (generated with fast-check, plus nasties): no 5xx, no rows. */
export async function malformedRequests(total = Number(process.env.FAULTS_FUZZ ?? 5000)): Promise<ScenarioResult> {
  const fc = await import('fast-check');
  const stack = await startStack('s6');
  try {
    await stack.startApi();
    const routes = await openApiRoutes(stack);
    const before = await rowCounts(stack);
    const wrongType = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.jsonValue(), { maxLength: 4 }),
      fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
    );
    const badBody = fc.oneof(
      // Not an object where an object is expected.
      fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null)).map((v) => JSON.stringify(v)),
      // The real field names with values of the wrong type.
      fc.dictionary(fc.constantFrom(...FIELD_NAMES), wrongType, { minKeys: 1, maxKeys: 6 }).map((v) => JSON.stringify(v)),
      // Arrays of wrongly typed objects (the batch endpoint).
      fc
        .array(fc.dictionary(fc.constantFrom(...FIELD_NAMES), wrongType, { maxKeys: 4 }), { minLength: 1, maxLength: 5 })
        .map((v) => JSON.stringify(v)),
      // Truncated JSON and unicode noise.
      fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => `{"name": "${s}`),
    );
    // Never a small positive integer: that could be the team's own domain or webhook, and a valid
    // DELETE on it is not malformed.
    const badId = fc
      .oneof(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
        fc.integer().map(String),
        fc.constantFrom('0', '-1', 'null', 'undefined', '%', '..'),
      )
      .filter((s) => !/^\s*\+?0*[1-9]\d{0,5}\s*$/.test(s));
    const badQuery = fc.dictionary(
      fc.constantFrom('page', 'limit', 'status', 'days', 'domainId', 'emails', 'ids', 'search'),
      fc.oneof(fc.string(), fc.integer().map(String)),
      { maxKeys: 3 },
    );
    const requestArb = fc.record({ route: fc.constantFrom(...routes), id: badId, body: badBody, query: badQuery });
    const generated = fc.sample(requestArb, total - nasties().length * 2);

    const fiveXX: string[] = [];
    let sent = 0;
    const statuses = new Map<number, number>();
    const fire = async (method: string, path: string, body: string | undefined, headers: Record<string, string> = {}) => {
      let status: number;
      try {
        const res = await fetch(`${stack.apiUrl}${path.startsWith('/api') ? '' : '/api/v1'}${path}`, {
          method: method.toUpperCase(),
          headers: { ...stack.team.auth, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
          body: method === 'get' ? undefined : body,
        });
        await res.arrayBuffer();
        status = res.status;
      } catch (err) {
        // fetch refuses some headers itself (they never reach the API): not a server answer.
        status = (err as Error).name === 'TypeError' && !(err as { cause?: unknown }).cause ? 0 : -1;
      }
      sent++;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500 || status === -1) fiveXX.push(`${method.toUpperCase()} ${path.slice(0, 60)} → ${status}`);
    };
    const fill = (path: string, id: string) => path.replace(/\{\w+\}/g, encodeURIComponent(id));
    const jobs: (() => Promise<void>)[] = generated.map((g) => () => {
      const qs = new URLSearchParams(g.query).toString();
      return fire(g.route.method, fill(g.route.path, g.id) + (qs ? `?${qs}` : ''), g.route.method === 'get' ? undefined : g.body);
    });
    // Each nasty on a body route and on a route with a path parameter.
    const bodyRoutes = routes.filter((r) => r.hasBody);
    const idRoutes = routes.filter((r) => r.path.includes('{'));
    nasties().forEach((n, i) => {
      for (const route of [bodyRoutes[i % bodyRoutes.length], idRoutes[i % idRoutes.length]]) {
        const path = fill(route.path, n.pathId ?? 'nope') + (n.query ? `?${n.query}` : '');
        jobs.push(() => fire(route.method, path, route.method === 'get' ? undefined : (n.body ?? '{}'), n.headers));
      }
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < jobs.length) await jobs[next++]();
      }),
    );
    const changed = countDiff(before, await rowCounts(stack));
    const health = (await fetch(`${stack.apiUrl}/health`)).status;
    const pass = fiveXX.length === 0 && changed.length === 0 && health === 200 && sent >= total;
    const byStatus = [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}:${n}`)
      .join(',');
    return {
      pass,
      figures: `requests=${sent} routes=${routes.length} status_counts=${byStatus} server_errors=${fiveXX.length}${fiveXX.length ? ` [${fiveXX.slice(0, 5).join('; ')}]` : ''} tables_changed=${changed.length}${changed.length ? ` [${changed.join(' ')}]` : ''}`,
    };
  } finally {
    await stack.close();
  }
}
