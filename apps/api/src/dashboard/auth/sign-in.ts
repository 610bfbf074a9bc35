import { z } from 'zod';
import { ApiError, badRequest } from '@mailrail/domain/errors/api-error';
import {
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyAgainstDummy,
  verifyPassword,
} from '@mailrail/domain/users/passwords';
import { normaliseUserEmail } from '@mailrail/domain/users/users';
import { revokeUserTokens } from '@mailrail/domain/users/user-tokens';
import { MAX_STORED_ADDRESS_LENGTH } from '@mailrail/domain/emails/address';
import type { ApiDeps } from '../../deps';
import type { LoginThrottle } from './login-throttle';

// Sign-in answers never tell whether an address has an account: one message, and the same
// argon2 work (a dummy hash) when there is no account or no password yet.

export const INVALID_CREDENTIALS = 'Invalid email or password';

const typedEmail = z.string().max(MAX_STORED_ADDRESS_LENGTH).transform(normaliseUserEmail);
const typedPassword = z.string().min(1).max(MAX_PASSWORD_LENGTH);
export const newPasswordField = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH} characters`);

export const loginBody = z.object({ email: typedEmail, password: typedPassword });
export const emailOnlyBody = z.object({ email: typedEmail });
export const tokenBody = z.object({ token: z.string().max(200) });
export const resetConfirmBody = z.object({ token: z.string().max(200), password: newPasswordField });
export const changePasswordBody = z.object({ currentPassword: typedPassword.optional(), newPassword: newPasswordField });

/** The user id for a correct email and password; 401 otherwise, 429 past the throttle. */
export async function checkCredentials(
  deps: ApiDeps,
  throttle: LoginThrottle,
  ip: string,
  input: z.infer<typeof loginBody>,
): Promise<number> {
  // Counted before the password is checked, so concurrent guesses cannot outrun the count.
  const attempt = await throttle.reserve(ip, input.email);
  const user = await deps.db.user.findUnique({ where: { email: input.email }, select: { id: true, passwordHash: true } });
  const ok = user?.passwordHash ? await verifyPassword(user.passwordHash, input.password) : await verifyAgainstDummy(input.password);
  if (!user || !ok) throw new ApiError('UNAUTHORIZED', INVALID_CREDENTIALS);
  await attempt.succeeded();
  return user.id;
}

/** Sets the user's password (argon2id); every sign-in or reset link issued before it stops working. */
export async function setPassword(deps: Pick<ApiDeps, 'db'>, userId: number, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  await deps.db.$transaction([deps.db.user.update({ where: { id: userId }, data: { passwordHash } }), revokeUserTokens(deps.db, userId)]);
}

/**
 * A signed-in password change: the current password is required when there is one (and wrong
 * guesses count against the sign-in throttle, before each check, so a stolen session cannot try passwords freely).
 */
export async function changePassword(
  deps: ApiDeps,
  throttle: LoginThrottle,
  ip: string,
  userId: number,
  input: z.infer<typeof changePasswordBody>,
): Promise<void> {
  const user = await deps.db.user.findUniqueOrThrow({ where: { id: userId }, select: { email: true, passwordHash: true } });
  if (user.passwordHash) {
    if (!input.currentPassword)
      throw badRequest('Invalid request body: currentPassword: Required', [{ path: ['currentPassword'], message: 'Required' }]);
    const attempt = await throttle.reserve(ip, user.email);
    if (!(await verifyPassword(user.passwordHash, input.currentPassword)))
      throw badRequest('The current password is wrong', [{ path: ['currentPassword'], message: 'is wrong' }]);
    await attempt.succeeded();
  }
  await setPassword(deps, userId, input.newPassword);
}

export const invalidLink = () => badRequest('This link is invalid, expired or already used');
