import { notFound } from '@mailrail/domain/errors/api-error';
import { explainedRecipientOutcomes } from '@mailrail/domain/deliverability/recipient-explanations';
import type { AttachmentSummary } from '@mailrail/domain/emails/attachment-list';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';

/**
 * One email of the team (and of the key's domain when bound), with its events oldest first and
 * every recipient's outcome (`recipients`, added to useSend's fields: suppressed ones included),
 * each explained in plain words (docs/deliverability.md), where it came from (`source`) and its
 * attachments' names, types and sizes (`attachmentList`), both added too.
 */
export async function getEmail(deps: ApiDeps, auth: AuthContext, emailId: string) {
  const email = await deps.db.email.findFirst({
    where: { id: emailId, teamId: auth.teamId, ...(auth.domainId !== null ? { domainId: auth.domainId } : {}) },
    select: {
      id: true,
      teamId: true,
      to: true,
      from: true,
      subject: true,
      html: true,
      text: true,
      createdAt: true,
      updatedAt: true,
      latestStatus: true,
      scheduledAt: true,
      domainId: true,
      replyTo: true,
      cc: true,
      bcc: true,
      skippedRecipients: true,
      source: true,
      attachmentList: true,
      emailEvents: { select: { emailId: true, status: true, createdAt: true, data: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    },
  });
  if (!email) throw notFound('Email not found');
  const { skippedRecipients, attachmentList, ...fields } = email;
  // Names, types and sizes only: the contents were never answered here.
  return {
    ...fields,
    attachmentList: (attachmentList ?? []) as unknown as AttachmentSummary[],
    recipients: explainedRecipientOutcomes({ ...email, skippedRecipients }, email.emailEvents),
  };
}
