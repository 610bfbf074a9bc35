import { ApiError, renderTemplate, type EmailDraft, type Issue } from '@mailrail/core';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { parseFromAddress, type SendEmailPayload } from './schemas';
import type { TeamDomains } from './team-domains';

export interface DraftContext {
  deps: ApiDeps;
  domains: TeamDomains;
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
export async function buildDrafts(ctx: DraftContext, auth: AuthContext, payloads: SendEmailPayload[], indexed: boolean): Promise<EmailDraft[]> {
  const { db, config } = ctx.deps;
  const at = (i: number, ...path: (string | number)[]) => (indexed ? [i, ...path] : path);
  const issues: Issue[] = [];

  const templateIds = [...new Set(payloads.map((p) => p.templateId).filter((t): t is string => !!t))];
  const replyIds = [...new Set(payloads.map((p) => p.inReplyToId).filter((t): t is string => !!t))];
  const [templates, replied] = await Promise.all([
    templateIds.length
      ? db.template.findMany({ where: { id: { in: templateIds }, teamId: auth.teamId }, select: { id: true, subject: true, html: true, text: true } })
      : [],
    replyIds.length ? db.email.findMany({ where: { id: { in: replyIds }, teamId: auth.teamId }, select: { id: true } }) : [],
  ]);
  const templateById = new Map(templates.map((t) => [t.id, t]));
  const repliedIds = new Set(replied.map((e) => e.id));
  const maxBytes = config.EMAIL_MAX_MESSAGE_MB * 1024 * 1024;

  const drafts: EmailDraft[] = [];
  for (const [i, p] of payloads.entries()) {
    const from = parseFromAddress(p.from)!;
    const domain = await ctx.domains.find(auth.teamId, from.domain);
    if (auth.domainId !== null && domain?.id !== auth.domainId) {
      throw new ApiError('FORBIDDEN', `API key does not have access to domain: ${from.domain}`);
    }
    if (!domain) {
      issues.push({ path: at(i, 'from'), message: `Domain: ${from.domain} not found. Add it and verify it before sending` });
      continue;
    }
    if (domain.status !== 'SUCCESS') {
      issues.push({ path: at(i, 'from'), message: `Domain: ${from.domain} is not verified` });
      continue;
    }
    if (p.inReplyToId && !repliedIds.has(p.inReplyToId)) {
      issues.push({ path: at(i, 'inReplyToId'), message: 'inReplyToId is not an email of this team' });
    }

    let subject = p.subject ?? '';
    let html = p.html ?? null;
    let text = p.text ?? null;
    if (p.templateId) {
      const t = templateById.get(p.templateId);
      if (!t) {
        issues.push({ path: at(i, 'templateId'), message: 'Template not found' });
        continue;
      }
      // The template wins where it has content (as in useSend); the request fills the gaps.
      const vars = p.variables ?? {};
      subject = renderTemplate(t.subject, vars);
      html = t.html ? renderTemplate(t.html, vars, { escapeHtml: true }) : html;
      text = t.text ? renderTemplate(t.text, vars) : text;
      if (!html && !text) {
        issues.push({ path: at(i, 'html'), message: 'Either text or html content must be provided (the template has neither).' });
        continue;
      }
    }

    const size = messageSize(p, subject, html, text);
    if (size > maxBytes) {
      const where = indexed ? `Email ${i}` : 'The email';
      throw new ApiError('PAYLOAD_TOO_LARGE', `${where} is ${(size / 1048576).toFixed(1)} MB; the limit is ${config.EMAIL_MAX_MESSAGE_MB} MB including attachments (base64)`, [
        { path: at(i, 'attachments'), message: 'message too large' },
      ]);
    }

    drafts.push({
      teamId: auth.teamId,
      domainId: domain.id,
      region: domain.region,
      apiKeyId: auth.apiKeyId,
      from: p.from.trim(),
      to: p.to,
      replyTo: p.replyTo ?? [],
      cc: p.cc ?? [],
      bcc: p.bcc ?? [],
      subject,
      html,
      text,
      headers: p.headers && Object.keys(p.headers).length ? p.headers : null,
      attachments: p.attachments?.length ? p.attachments : null,
      templateId: p.templateId ?? null,
      inReplyToId: p.inReplyToId ?? null,
      scheduledAt: p.scheduledAt ?? null,
      lane: 'transactional',
    });
  }
  if (issues.length) {
    const first = issues[0];
    throw new ApiError('BAD_REQUEST', indexed ? `Invalid email at index ${first.path[0]}: ${first.message}` : first.message, issues);
  }
  return drafts;
}
