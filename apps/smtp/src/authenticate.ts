import ipaddr from 'ipaddr.js';
import type { SMTPServerAuthentication, SMTPServerSession } from 'smtp-server';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { TooManyAuthFailures, type AuthContext } from '@mailrail/domain/teams/api-key-auth';
import { SMTP_USERNAMES } from '@mailrail/domain/teams/smtp-usernames';
import type { SmtpDeps } from './deps';
import { reply } from './replies';

// AUTH PLAIN and LOGIN: the username is `mailrail` (or `usesend`, as useSend's SMTP clients are
// configured), the password an API key, checked by the API's own rule (core api-key-auth.ts):
// the same cache, revocations and per-IP failure limit. Both FULL and SENDING keys may send; a
// key bound to a domain may send from that domain only (checked at MAIL FROM and on From).

function isLoopback(address: string): boolean {
  return ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';
}

/** The key's context, or a thrown SmtpReply (535 wrong credentials, 421 blocked IP, 454 database down). */
export async function authenticate(
  deps: SmtpDeps,
  auth: SMTPServerAuthentication,
  session: SMTPServerSession,
  opts: { allowInsecureAuth: boolean },
): Promise<AuthContext> {
  // smtp-server offers AUTH on a plain connection only when the development flag allowed it:
  // even then, only to a client on this machine.
  if (!session.secure && !(opts.allowInsecureAuth && isLoopback(session.remoteAddress))) throw reply.encryptionRequired();
  let context: AuthContext;
  try {
    // The key first: a failure is counted against the IP whatever the username was.
    context = await deps.verifier.verify(auth.password ?? '', session.remoteAddress);
  } catch (err) {
    if (err instanceof TooManyAuthFailures) throw reply.tooManyAuthFailures(err.retryAfter);
    if (err instanceof ApiError && err.code === 'FORBIDDEN') throw reply.badCredentials();
    deps.log.warn({ err, session: session.id }, 'smtp auth could not be checked');
    throw reply.authUnavailable();
  }
  if (!SMTP_USERNAMES.has((auth.username ?? '').toLowerCase())) {
    deps.metrics.authFailures.inc({ reason: 'bad-username' });
    throw reply.badCredentials();
  }
  return context;
}
