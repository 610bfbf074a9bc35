import { ApiError, type Issue } from '@mailrail/domain/errors/api-error';
import { parseAddress } from '@mailrail/domain/emails/address';
import { senderDomainError } from '@mailrail/domain/domains/sender-domain';
import { fillTemplate } from '@mailrail/domain/templates/render-template';
import { type EmailDraft } from '@mailrail/domain/emails/create-emails';
import { checkSender, maxMessageBytes, type EmailIntake } from '@mailrail/domain/emails/email-intake';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import type { SendEmailPayload } from './schemas';

export interface DraftContext {
  deps: ApiDeps;
  intake: EmailIntake;
}

/** Bytes an email takes on the wire, roughly: SES counts the whole MIME message, attachments base64. */
function messageSize(p: SendEmailPayload, subject: string, html: string | null, text: string | null): number {
  let size = Buffer.byteLength(subject) + (html ? Buffer.byteLength(html) : 0) + (text ? Buffer.byteLength(text) : 0);
  // Base64 is pure ASCII; MIME adds a CRLF every 76 characters.
  for (const a of p.attachments ?? []) size += Math.ceil(a.content.length * (78 / 76));
  for (const [k, v] of Object.entries(p.headers ?? {})) size += k.length + v.length + 4;
  return size;
}

/**
 * Checks what zod cannot (the from domain, templates, inReplyToId, the size) for every payload
 * before anything is written, and turns each into a rendered draft. `indexed` prefixes issue
 * paths with the item index (batch). Reads are one query per kind, whatever the item count.
 */
export async function buildDrafts(
  ctx: DraftContext,
  auth: AuthContext,
  payloads: SendEmailPayload[],
  indexed: boolean,
): Promise<EmailDraft[]> {
  const { config } = ctx.deps;
  const at = (i: number, ...path: (string | number)[]) => (indexed ? [i, ...path] : path);
  const issues: Issue[] = [];

  const { templateById, repliedIds } = await loadReferences(ctx, auth, payloads);
  const maxBytes = maxMessageBytes(config);

  // A batch mostly sends from one address: it is parsed, and the sender rule checked, once per from.
  const checks = new Map<string, Awaited<ReturnType<typeof checkSender>>>();
  const drafts: EmailDraft[] = [];
  for (const [i, p] of payloads.entries()) {
    let check = checks.get(p.from);
    if (!check) checks.set(p.from, (check = await checkSender(ctx.intake, auth, parseAddress(p.from)!.domain))); // the schema validated it
    if (!check.ok) {
      // A key bound to another domain refuses the whole request (403) at once.
      if (check.refusal === 'forbidden') throw senderDomainError(check, at(i, 'from'));
      issues.push({ path: at(i, 'from'), message: check.message });
      continue;
    }
    const { domain } = check;
    if (p.inReplyToId && !repliedIds.has(p.inReplyToId)) {
      issues.push({ path: at(i, 'inReplyToId'), message: 'inReplyToId is not an email of this team' });
    }

    const atItem: IssuePath = (...path) => at(i, ...path);
    const content = renderContent(p, templateById, atItem, issues);
    if (!content) continue;
    checkSize(
      messageSize(p, content.subject, content.html, content.text),
      maxBytes,
      config.EMAIL_MAX_MESSAGE_MB,
      indexed ? `Email ${i}` : 'The email',
      atItem,
    );
    drafts.push(toDraft(auth, domain, p, content));
  }
  if (issues.length) throw invalid(issues, indexed);
  return drafts;
}

type Template = { id: string; subject: string; html: string | null; text: string | null };
type Content = { subject: string; html: string | null; text: string | null };
type IssuePath = (...path: (string | number)[]) => (string | number)[];

/** The team's templates and replied-to emails the payloads name: one query per kind. */
async function loadReferences(ctx: DraftContext, auth: AuthContext, payloads: SendEmailPayload[]) {
  const { db } = ctx.deps;
  const templateIds = [...new Set(payloads.map((p) => p.templateId).filter((t): t is string => !!t))];
  const replyIds = [...new Set(payloads.map((p) => p.inReplyToId).filter((t): t is string => !!t))];
  // Most sends name neither: no query, and no await on an empty Promise.all.
  if (!templateIds.length && !replyIds.length) return { templateById: new Map<string, Template>(), repliedIds: new Set<string>() };
  const [templates, replied] = await Promise.all([
    templateIds.length
      ? db.template.findMany({
          where: { id: { in: templateIds }, teamId: auth.teamId },
          select: { id: true, subject: true, html: true, text: true },
        })
      : [],
    replyIds.length ? db.email.findMany({ where: { id: { in: replyIds }, teamId: auth.teamId }, select: { id: true } }) : [],
  ]);
  return { templateById: new Map<string, Template>(templates.map((t) => [t.id, t])), repliedIds: new Set(replied.map((e) => e.id)) };
}

/** Subject and bodies: the request's, or its template's rendered with its variables (null and an issue when unusable). */
function renderContent(p: SendEmailPayload, templateById: Map<string, Template>, at: IssuePath, issues: Issue[]): Content | null {
  let subject = p.subject ?? '';
  let html = p.html ?? null;
  let text = p.text ?? null;
  if (p.templateId) {
    const t = templateById.get(p.templateId);
    if (!t) {
      issues.push({ path: at('templateId'), message: 'Template not found' });
      return null;
    }
    // The template wins where it has content (as in useSend); the request fills the gaps.
    const filled = fillTemplate(t, p.variables ?? {});
    subject = filled.subject;
    html = filled.html ?? html;
    text = filled.text ?? text;
    if (!html && !text) {
      issues.push({ path: at('html'), message: 'Either text or html content must be provided (the template has neither).' });
      return null;
    }
  }
  return { subject, html, text };
}

/** A message over EMAIL_MAX_MESSAGE_MB is a 413 at once (not one issue among others). */
function checkSize(size: number, maxBytes: number, maxMb: number, where: string, at: IssuePath): void {
  if (size > maxBytes) {
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      `${where} is ${(size / 1048576).toFixed(1)} MB; the limit is ${maxMb} MB including attachments (base64)`,
      [{ path: at('attachments'), message: 'message too large' }],
    );
  }
}

function toDraft(auth: AuthContext, domain: { id: number; region: string }, p: SendEmailPayload, content: Content): EmailDraft {
  return {
    teamId: auth.teamId,
    domainId: domain.id,
    region: domain.region,
    source: 'API',
    apiKeyId: auth.apiKeyId,
    from: p.from.trim(),
    to: p.to,
    replyTo: p.replyTo ?? [],
    cc: p.cc ?? [],
    bcc: p.bcc ?? [],
    subject: content.subject,
    html: content.html,
    text: content.text,
    headers: p.headers && Object.keys(p.headers).length ? p.headers : null,
    attachments: p.attachments?.length ? p.attachments : null,
    templateId: p.templateId ?? null,
    inReplyToId: p.inReplyToId ?? null,
    scheduledAt: p.scheduledAt ?? null,
    lane: 'transactional',
  };
}

/** All issues as one 400; its message names the first. */
function invalid(issues: Issue[], indexed: boolean): ApiError {
  const first = issues[0];
  return new ApiError('BAD_REQUEST', indexed ? `Invalid email at index ${first.path[0]}: ${first.message}` : first.message, issues);
}
