import request from 'supertest';
import { simpleParser } from 'mailparser';
import type { TeamRole } from '@mailrail/platform/db/generated/enums';
import { hashPassword } from '@mailrail/domain/users/passwords';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import type { TestApi } from '../testing/api-harness';

// Test helpers for the dashboard routes: users with passwords, and a signed-in browser (a
// supertest agent keeps the session cookie) that sends Origin and X-CSRF-Token like the app does.

export const PASSWORD = 'correct horse battery staple';

let seq = 0;

/** A user with PASSWORD, member of each team given. */
export async function addUser(api: TestApi, teams: { teamId: number; role: TeamRole }[], email = `user${++seq}-${Date.now()}@example.org`) {
  const user = await api.deps.db.user.create({ data: { email, passwordHash: await hashPassword(PASSWORD) } });
  for (const t of teams) await api.deps.db.membership.create({ data: { userId: user.id, teamId: t.teamId, role: t.role } });
  return { userId: user.id, email };
}

export interface Browser {
  agent: ReturnType<typeof request.agent>;
  origin: string;
  csrfToken: string;
  /** The session cookie's token once signed in (tests look for it where it must not be). */
  sessionToken: string;
  get(path: string): request.Test;
  post(path: string, body?: object): request.Test;
  patch(path: string, body?: object): request.Test;
  put(path: string, body?: object): request.Test;
  delete(path: string): request.Test;
}

/** A browser on the dashboard's origin, not signed in yet. */
export function browser(api: TestApi): Browser {
  const agent = request.agent(api.app);
  const origin = api.config.PUBLIC_URL;
  const b: Browser = {
    agent,
    origin,
    csrfToken: '',
    sessionToken: '',
    get: (path) => agent.get(path),
    post: (path, body) =>
      agent
        .post(path)
        .set('Origin', origin)
        .set('X-CSRF-Token', b.csrfToken)
        .send(body ?? {}),
    patch: (path, body) =>
      agent
        .patch(path)
        .set('Origin', origin)
        .set('X-CSRF-Token', b.csrfToken)
        .send(body ?? {}),
    put: (path, body) =>
      agent
        .put(path)
        .set('Origin', origin)
        .set('X-CSRF-Token', b.csrfToken)
        .send(body ?? {}),
    delete: (path) => agent.delete(path).set('Origin', origin).set('X-CSRF-Token', b.csrfToken),
  };
  return b;
}

/** Signs in with email and PASSWORD; the browser then carries the cookie and the CSRF token. */
export async function signIn(api: TestApi, email: string, password = PASSWORD): Promise<Browser> {
  const b = browser(api);
  const res = await b.post('/api/dashboard/auth/login', { email, password });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  b.csrfToken = res.body.csrfToken;
  b.sessionToken = sessionTokenOf(res);
  return b;
}

/** The session token a sign-in answer's Set-Cookie carries ('' when none). */
export function sessionTokenOf(res: request.Response): string {
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('mailrail_session='));
  return cookie ? cookie.slice('mailrail_session='.length).split(';')[0] : '';
}

/**
 * The team that sends dashboard mail: one of its own (no members, keys or webhooks, or the mail
 * is refused) with `domain` verified. Created right after startTestApi, it is team 2.
 */
export async function addDashboardMailTeam(api: TestApi, domain: string): Promise<number> {
  const team = await createTeam(api.deps.db, 'Dashboard mail');
  if (team.id !== 2) throw new Error(`the dashboard mail team is ${team.id}; create it first so that DASHBOARD_MAIL_TEAM_ID=2 names it`);
  await api.addDomain(team.id, domain);
  return team.id;
}

/** The `#token=` of the newest dashboard mail to `to`, read from the message as sent (the stored text has no link). */
export async function dashboardMailToken(api: TestApi, to: string): Promise<string> {
  const email = await api.deps.db.email.findFirstOrThrow({ where: { to: { has: to } }, orderBy: { createdAt: 'desc' } });
  const sent = await simpleParser(Buffer.from(email.rawMessage ?? []));
  const m = /#token=([\w-]{43})/.exec(sent.text ?? '');
  if (!m) throw new Error(`no link in the dashboard mail to ${to}`);
  return m[1];
}
