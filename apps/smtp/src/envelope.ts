import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { isEmailAddress, parseAddress } from '@mailrail/domain/emails/address';
import { checkSender, MAX_RECIPIENTS } from '@mailrail/domain/emails/email-intake';
import type { AuthContext } from '@mailrail/domain/teams/api-key-auth';
import type { SmtpDeps } from './deps';
import { reply } from './replies';

// MAIL FROM and RCPT TO, refused as early as SMTP allows: the rate and the sender domain at
// MAIL FROM (one message is one request of the team's rate, as one POST /api/v1/emails is), the
// address rule and SES's 50 recipients at RCPT TO. The From header is checked again at DATA.

/** MAIL FROM: the team's rate, then the sender-domain rule on the envelope sender. */
export async function checkEnvelopeSender(deps: SmtpDeps, auth: AuthContext, from: SMTPServerAddress): Promise<void> {
  if (!from.address) throw reply.senderRequired();
  const parsed = parseAddress(from.address);
  if (!parsed) throw reply.badSenderAddress();
  const rate = await deps.rate.hit(auth.teamId, auth.rateLimit);
  if (rate?.exceeded) throw reply.rateLimited(rate.limit, rate.resetSeconds);
  const check = await checkSender(deps.intake, auth, parsed.domain);
  if (!check.ok) throw reply.envelopeSenderRefused(check.message);
}

/** RCPT TO: a valid address, and at most MAX_RECIPIENTS distinct ones per message. */
export function checkRecipient(to: SMTPServerAddress, session: SMTPServerSession): void {
  if (!isEmailAddress(to.address)) throw reply.badRecipientAddress();
  const accepted = session.envelope.rcptTo;
  const again = accepted.some((r) => r.address.toLowerCase() === to.address.toLowerCase());
  if (!again && accepted.length >= MAX_RECIPIENTS) throw reply.tooManyRecipients(MAX_RECIPIENTS);
}
