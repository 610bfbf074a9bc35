import type { Db } from '@mailrail/platform/db/client';
import type { UserTokenPurpose } from '@mailrail/platform/db/generated/enums';
import { hashSecretToken, looksLikeSecretToken, newSecretToken } from './link-tokens';

/**
 * A single-use link token for a user (one-time sign-in, password reset); returns the token, stores
 * its hash. Only the newest link of a purpose works: issuing one voids the user's older unused ones.
 */
export async function issueUserToken(
  db: Db,
  input: { userId: number; purpose: UserTokenPurpose; ttlMs: number; now: Date },
): Promise<string> {
  const token = newSecretToken();
  await db.$transaction([
    revokeUserTokens(db, input.userId, input.purpose),
    db.userToken.create({
      data: {
        tokenHash: hashSecretToken(token),
        userId: input.userId,
        purpose: input.purpose,
        expiresAt: new Date(input.now.getTime() + input.ttlMs),
        createdAt: input.now,
      },
    }),
  ]);
  return token;
}

/**
 * Voids the user's unused link tokens (of one purpose, or all): a newer link replaces older ones,
 * and a password change voids every link issued before it. Unexecuted, to join a transaction.
 */
export function revokeUserTokens(db: Db, userId: number, purpose?: UserTokenPurpose) {
  return db.userToken.deleteMany({ where: { userId, usedAt: null, ...(purpose ? { purpose } : {}) } });
}

/**
 * Uses a token once: one conditional UPDATE marks it used, so two concurrent uses cannot both
 * succeed. Answers the user id, or null for an unknown, expired, used or other-purpose token.
 */
export async function consumeUserToken(db: Db, token: string, purpose: UserTokenPurpose, now: Date): Promise<number | null> {
  if (!looksLikeSecretToken(token)) return null;
  const tokenHash = hashSecretToken(token);
  const used = await db.userToken.updateMany({
    where: { tokenHash, purpose, usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (used.count !== 1) return null;
  const row = await db.userToken.findUnique({ where: { tokenHash }, select: { userId: true } });
  return row?.userId ?? null;
}
