import { badRequest } from '@mailrail/domain/errors/api-error';
import type { AuthContext } from '../../http/auth';
import { acceptEmail, type SendContext } from '../../emails/send-emails';
import { sendEmailPayload } from '../../emails/schemas';
import { parseOrThrow } from '../../http/validate';

// "Send a test email" (Overview, SMTP page): one email from the team's first verified domain to
// the signed-in user, through the same intake as POST /api/v1/emails, so it is queued, suppressed,
// rate limited, logged and counted like any other. When it cannot be sent the answer says why.

const STATUS_WORDS: Record<string, string> = {
  NOT_STARTED: 'not checked yet',
  PENDING: 'waiting for its DNS records',
  FAILED: 'its DNS check failed',
  TEMPORARY_FAILURE: 'its DNS check could not finish',
};

export async function sendTestEmail(send: SendContext, auth: AuthContext, userId: number) {
  const { db } = send.deps;
  const [user, domains] = await Promise.all([
    db.user.findUniqueOrThrow({ where: { id: userId }, select: { email: true } }),
    db.domain.findMany({ where: { teamId: auth.teamId }, select: { name: true, status: true }, orderBy: { name: 'asc' }, take: 50 }),
  ]);
  const verified = domains.find((d) => d.status === 'SUCCESS');
  if (!verified) {
    if (!domains.length) throw badRequest('This team has no domain yet: add one on the Domains page and verify it, then send a test email');
    const states = domains
      .slice(0, 3)
      .map((d) => `${d.name}: ${STATUS_WORDS[d.status] ?? d.status}`)
      .join('; ');
    throw badRequest(`None of this team's domains is verified yet (${states}); a test email needs a verified sender domain`);
  }
  const from = `mailrail test <test@${verified.name}>`;
  const { emailId } = await acceptEmail(
    send,
    auth,
    parseOrThrow(sendEmailPayload, {
      from,
      to: user.email,
      subject: 'Test email from mailrail',
      text: `This test email was sent from the mailrail dashboard through the normal send path, from ${verified.name} to ${user.email}. If you are reading it, sending works.`,
    }),
    undefined,
  );
  return { emailId, from, to: user.email };
}
