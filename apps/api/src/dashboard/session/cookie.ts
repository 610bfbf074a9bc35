import { parse, serialize } from 'cookie';
import type { Request, Response } from 'express';
import type { Config } from '@mailrail/core/config/schema';

export const SESSION_COOKIE = 'mailrail_session';

// httpOnly: page scripts never see the token. SameSite=Lax: other sites' forms and fetches do not
// carry it (CSRF's first line; the Origin and X-CSRF-Token checks are the second). Secure when the
// dashboard is served over https.
function attributes(config: Pick<Config, 'PUBLIC_URL'>) {
  return { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: config.PUBLIC_URL.startsWith('https:') };
}

export function readSessionCookie(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header || header.length > 8192) return undefined;
  return parse(header)[SESSION_COOKIE];
}

export function setSessionCookie(res: Response, config: Pick<Config, 'PUBLIC_URL'>, token: string, expires: Date): void {
  res.append('Set-Cookie', serialize(SESSION_COOKIE, token, { ...attributes(config), expires }));
}

export function clearSessionCookie(res: Response, config: Pick<Config, 'PUBLIC_URL'>): void {
  res.append('Set-Cookie', serialize(SESSION_COOKIE, '', { ...attributes(config), expires: new Date(0) }));
}
