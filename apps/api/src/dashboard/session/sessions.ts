import { hashSecretToken, looksLikeSecretToken, newSecretToken } from '@mailrail/domain/users/link-tokens';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../../deps';

// Server-side sessions in PostgreSQL (only the token's SHA-256 is stored). No cache: signing out
// (here or everywhere) must take effect on the very next request, on every replica.

export interface DashboardSession {
  id: number;
  userId: number;
  csrfToken: string;
  /** When the session ends if idle; moves forward with use, never past absoluteExpiresAt. */
  expiresAt: Date;
  absoluteExpiresAt: Date;
}

// lastSeenAt / expiresAt are written at most this often per session, not on every request.
const TOUCH_EVERY_MS = 60_000;

type SessionDeps = Pick<ApiDeps, 'db' | 'config' | 'clock'>;

const idleMs = (deps: SessionDeps) => deps.config.DASHBOARD_SESSION_IDLE_MINUTES * 60_000;
const maxMs = (deps: SessionDeps) => deps.config.DASHBOARD_SESSION_MAX_DAYS * 86_400_000;

/** A new session for the user; the token goes into the cookie and nowhere else. */
export async function createSession(deps: SessionDeps, userId: number): Promise<{ token: string; session: DashboardSession }> {
  const now = deps.clock.now();
  const token = newSecretToken();
  const absoluteExpiresAt = new Date(now.getTime() + maxMs(deps));
  const expiresAt = new Date(Math.min(now.getTime() + idleMs(deps), absoluteExpiresAt.getTime()));
  // Housekeeping: the user's ended sessions go when a new one starts.
  await deps.db.session.deleteMany({ where: { userId, OR: [{ expiresAt: { lte: now } }, { absoluteExpiresAt: { lte: now } }] } });
  const session = await deps.db.session.create({
    data: {
      tokenHash: hashSecretToken(token),
      userId,
      csrfToken: newSecretToken(),
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
      absoluteExpiresAt,
    },
    select: { id: true, userId: true, csrfToken: true, expiresAt: true, absoluteExpiresAt: true },
  });
  return { token, session };
}

/** The live session of a cookie token, its idle expiry pushed forward; null when unknown or expired. */
export async function findLiveSession(deps: SessionDeps, token: string): Promise<DashboardSession | null> {
  if (!looksLikeSecretToken(token)) return null;
  const now = deps.clock.now();
  // Every dashboard request runs this: one plain statement, not a compiled Prisma query.
  const [row] = await prismaExecutor(deps.db).query<DashboardSession & { lastSeenAt: Date }>(
    `SELECT id, "userId", "csrfToken", "expiresAt", "absoluteExpiresAt", "lastSeenAt" FROM "Session" WHERE "tokenHash" = $1`,
    [hashSecretToken(token)],
  );
  if (!row || row.expiresAt <= now || row.absoluteExpiresAt <= now) return null;
  const { lastSeenAt, ...session } = row;
  if (now.getTime() - lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
    const expiresAt = new Date(Math.min(now.getTime() + idleMs(deps), row.absoluteExpiresAt.getTime()));
    await deps.db.session.updateMany({ where: { id: row.id }, data: { lastSeenAt: now, expiresAt } });
    return { ...session, expiresAt };
  }
  return session;
}

export async function endSession(deps: SessionDeps, sessionId: number): Promise<void> {
  await deps.db.session.deleteMany({ where: { id: sessionId } });
}

/** Ends every session of the user but `keep` (when given); answers how many ended. */
export async function endUserSessions(deps: SessionDeps, userId: number, keep?: number): Promise<number> {
  const { count } = await deps.db.session.deleteMany({ where: { userId, ...(keep !== undefined ? { id: { not: keep } } : {}) } });
  return count;
}
