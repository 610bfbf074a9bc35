// Scenarios on the HTTP surface, with routes read from the API's own OpenAPI document.
import { startStack, type ScenarioResult, type Stack, type Team } from './stack';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export interface Route {
  method: Method;
  path: string;
  hasBody: boolean;
}

export async function openApiRoutes(stack: Stack): Promise<Route[]> {
  const doc = (await (await fetch(`${stack.apiUrl}/api/v1/doc`)).json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  const routes: Route[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) routes.push({ method: method as Method, path, hasBody: !!op.requestBody });
    }
  }
  return routes;
}

export async function call(stack: Stack, team: Team, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.apiUrl}${path.startsWith('/api') ? '' : '/api/v1'}${path}`, {
    method: method.toUpperCase(),
    headers: { ...team.auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
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

export function countDiff(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys({ ...before, ...after })
    .filter((t) => before[t] !== after[t])
    .map((t) => `${t}:${before[t] ?? 0}->${after[t] ?? 0}`);
}

/** One of each resource for a team, through the API; the ids by path-parameter meaning. */
async function createResources(stack: Stack, team: Team) {
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
  return {
    emailId: email.emailId as string,
    templateId: (template.id ?? template.templateId) as string,
    contactBookId: book.id as string,
    contactId: (contact.contactId ?? contact.id) as string,
    webhookId: String(hook.id ?? hook.webhookId),
    domainId: String(team.domain.id),
    email: 'blocked@example.org',
  };
}

function fillPath(path: string, ids: Awaited<ReturnType<typeof createResources>>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'id') return path.startsWith('/domains') ? ids.domainId : ids.webhookId;
    const v = (ids as Record<string, string>)[name];
    if (v === undefined) throw new Error(`no id for {${name}} in ${path}`);
    return encodeURIComponent(v);
  });
}

/** A body valid enough that only ownership can refuse it. */
function plausibleBody(route: Route): unknown {
  if (!route.hasBody) return undefined;
  if (route.path.startsWith('/emails/')) return { scheduledAt: new Date(Date.now() + 3_600_000).toISOString() };
  if (route.path.startsWith('/webhooks/')) return { description: 'taken over' };
  if (route.path.includes('/contacts/')) return { firstName: 'Mallory' };
  if (route.path.startsWith('/contacts') || route.path.endsWith('/contacts')) return { email: 'intruder@example.org' };
  return { name: 'taken over', subject: 'taken over' };
}

/** 7. Every route with a path parameter, called with another team's ids: all 404, nothing changed. */
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
      const r = await call(stack, teamB, route.method, path, plausibleBody(route));
      if (r.status !== 404 || r.json?.error?.code !== 'NOT_FOUND') wrong.push(`${route.method.toUpperCase()} ${route.path}=${r.status}`);
    }
    const changed = countDiff(before, await rowCounts(stack));
    // Team A still sees its own resources unchanged.
    const own = await call(stack, stack.team, 'get', `/emails/${ids.emailId}`);
    const pass = wrong.length === 0 && changed.length === 0 && own.status === 200 && routes.length > 10;
    return { pass, figures: `routes=${routes.length} not_404=${wrong.length}${wrong.length ? ` [${wrong.join(' ')}]` : ''} tables_changed=${changed.length}${changed.length ? ` [${changed.join(' ')}]` : ''}` };
  } finally {
    await stack.close();
  }
}
