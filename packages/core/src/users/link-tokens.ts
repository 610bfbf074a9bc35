import { createHash, randomBytes } from 'node:crypto';

// Secrets handed to a browser or put in an emailed link: session tokens, sign-in, password-reset
// and invitation links. 256 random bits; only their SHA-256 is stored, so a database leak gives
// nobody a working session or link. (No slow hash needed: the input is random, not a password.)

export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Shape check before any database lookup: 43 base64url characters. */
export function looksLikeSecretToken(token: string): boolean {
  return /^[\w-]{43}$/.test(token);
}

/** Dashboard pages the emailed and printed links open; the token rides in the fragment so no server log or Referer sees it. */
export type DashboardLinkPage = 'sign-in/link' | 'reset-password' | 'invitations/accept';

export function dashboardLink(publicUrl: string, page: DashboardLinkPage, token: string): string {
  return `${publicUrl}/${page}#token=${token}`;
}
