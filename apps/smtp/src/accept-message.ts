import { createHash } from 'node:crypto';
import type { SMTPServerSession } from 'smtp-server';
import { formatAddress, isEmailAddress, parseAddress } from '@mailrail/domain/emails/address';
import type { EmailDraft } from '@mailrail/domain/emails/create-emails';
import { checkSender, submitEmails } from '@mailrail/domain/emails/email-intake';
import { readClientHeaderBlock, SMTP_IDEMPOTENCY_HEADER, type ClientSenderHeaders } from '@mailrail/domain/emails/headers';
import { IdempotencyConflict } from '@mailrail/domain/emails/idempotency';
import { ApiError } from '@mailrail/domain/errors/api-error';
import type { AuthContext } from '@mailrail/domain/teams/api-key-auth';
import type { SmtpDeps } from './deps';
import { readAddressHeader, readMessage, type MessageAddress, type MessageFields } from './read-message';
import { reply, SmtpReply } from './replies';

// One message received in full becomes one email, through core's email intake (the path of
// POST /api/v1/emails): the From domain rule, suppressions, the group committer. The client's
// MIME is stored as written (Email.rawMessage) and sent as written; readMessage only reads the
// headers and bodies that fill the row's subject, from, to, cc, html and text, so that
// GET /api/v1/emails shows the email like any other.

const MAX_IDEMPOTENCY_KEY_LENGTH = 256;

interface Envelope {
  /** Bare RCPT TO addresses, as accepted. */
  recipients: string[];
}

/** `Name <addr>` when the name reads back (core's address rule), else the bare address. */
function storedAddress(a: { name?: string; address: string }): string {
  const formatted = formatAddress(a.name, a.address);
  return parseAddress(formatted) ? formatted : a.address;
}

/**
 * Who receives it is the envelope, whatever the headers say; the row names each envelope
 * recipient as the headers do: `to` if its To lists it, `cc` if Cc does, else `bcc`. When To
 * lists none of them (undisclosed recipients, a list address), they are all `to`: the email's
 * `to` is what suppression and the webhook payloads look at, so it is never empty.
 */
function recipientsOf(parsed: Pick<MessageFields, 'to' | 'cc'>, envelope: Envelope): Pick<EmailDraft, 'to' | 'cc' | 'bcc'> {
  const byAddress = (list: MessageAddress[]) => new Map(list.map((a) => [a.address.toLowerCase(), a]));
  const headerTo = byAddress(parsed.to);
  const headerCc = byAddress(parsed.cc);
  const to: string[] = [];
  const cc: string[] = [];
  const bcc: string[] = [];
  for (const address of envelope.recipients) {
    const key = address.toLowerCase();
    const named = headerTo.get(key) ?? headerCc.get(key);
    const list = headerTo.has(key) ? to : headerCc.has(key) ? cc : bcc;
    list.push(storedAddress({ name: named?.name, address }));
  }
  if (to.length === 0) return { to: [...cc, ...bcc], cc: [], bcc: [] };
  return { to, cc, bcc };
}

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/**
 * The domains the Sender and Return-Path headers name, each of which must be one the key may send
 * from (SES would take any domain verified in the account, another team's too). A Return-Path of
 * `<>` (the null path) names none.
 */
function senderHeaderDomains(senders: ClientSenderHeaders): { name: string; domain: string }[] {
  const named: { name: string; domain: string }[] = [];
  const check = (name: string, values: string[], nullPathAllowed: boolean) => {
    for (const value of values) {
      if (nullPathAllowed && value.replace(/[\s<>]/g, '') === '') continue;
      const addresses = readAddressHeader(value);
      if (addresses.length !== 1 || !isEmailAddress(addresses[0].address)) throw reply.senderHeaderInvalid(name);
      named.push({ name, domain: domainOf(addresses[0].address) });
    }
  };
  check('Sender', senders.sender, false);
  check('Return-Path', senders.returnPath, true);
  return named;
}

/** The client's idempotency key, or its Message-ID when resubmits are deduplicated; namespaced apart from the API's keys. */
function idempotencyKeyOf(parsed: MessageFields, dedupeByMessageId: boolean): { key: string; explicit: boolean } | undefined {
  const header = parsed.idempotencyKey;
  if (header !== undefined) {
    const value = typeof header === 'string' ? header.trim() : '';
    if (value.length < 1 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw reply.idempotencyKeyInvalid();
    return { key: `smtp:${value}`, explicit: true };
  }
  if (!dedupeByMessageId || !parsed.messageId) return undefined;
  const id =
    parsed.messageId.length > MAX_IDEMPOTENCY_KEY_LENGTH ? createHash('sha256').update(parsed.messageId).digest('hex') : parsed.messageId;
  return { key: `smtp-message-id:${id}`, explicit: false };
}

/**
 * Stores the message as an email and answers its id; throws an SmtpReply for the client. Nothing
 * is written unless the message is accepted, and an accepted message is committed before the
 * reply (one INSERT statement), so a 4xx never leaves a half-written email behind.
 */
export async function acceptMessage(
  deps: SmtpDeps,
  auth: AuthContext,
  session: Pick<SMTPServerSession, 'id'>,
  raw: Buffer,
  envelope: Envelope,
): Promise<string> {
  // The API's header rules (core headers.ts): CRLF lines only, one From, and every header that
  // names a sender at a domain of this key, before anything else reads the message.
  const block = readClientHeaderBlock(raw);
  if (!block.ok) throw block.problem === 'bare-line-break' ? reply.bareLineBreak() : reply.oneFromHeader();
  const otherSenders = senderHeaderDomains(block.senders);
  const parsed = await readMessage(raw, SMTP_IDEMPOTENCY_HEADER);
  const from = parsed.from;
  if (from.length !== 1 || !isEmailAddress(from[0].address)) throw reply.oneFromAddress();
  const fromDomain = domainOf(from[0].address);
  const idempotency = idempotencyKeyOf(parsed, deps.config.SMTP_DEDUPE_MESSAGE_ID);

  const build = async (): Promise<EmailDraft[]> => {
    const check = await checkSender(deps.intake, auth, fromDomain);
    if (!check.ok) throw reply.headerSenderRefused(check.message);
    for (const { name, domain } of otherSenders) {
      if (domain === fromDomain) continue;
      const other = await checkSender(deps.intake, auth, domain);
      if (!other.ok) throw reply.senderHeaderRefused(name, other.message);
    }
    return [
      {
        teamId: auth.teamId,
        domainId: check.domain.id,
        region: check.domain.region,
        source: 'SMTP',
        apiKeyId: auth.apiKeyId,
        from: storedAddress(from[0]),
        ...recipientsOf(parsed, envelope),
        replyTo: parsed.replyTo.map(storedAddress),
        subject: parsed.subject ?? '',
        html: parsed.html || null,
        text: parsed.text || null,
        rawMessage: raw,
        attachmentList: parsed.attachments,
        lane: 'transactional',
      },
    ];
  };
  // A resubmit is the same recipients and the same bytes; another message under the key is a conflict.
  const body = {
    recipients: [...envelope.recipients].map((r) => r.toLowerCase()).sort(),
    sha256: createHash('sha256').update(raw).digest('hex'),
  };
  const submit = (key: string | undefined) => submitEmails(deps.intake, auth, { idempotencyKey: key, body, build });
  try {
    const [emailId] = await submit(idempotency?.key);
    return emailId;
  } catch (err) {
    // A client that reuses Message-IDs for different messages is not deduplicated, never refused.
    if (err instanceof IdempotencyConflict && err.reason === 'mismatch' && idempotency && !idempotency.explicit) {
      const [emailId] = await submit(undefined);
      return emailId;
    }
    throw err;
  }
}

/** Any failure of acceptMessage as the reply the client gets: its own, or a temporary 451 (nothing was stored). */
export function toSmtpReply(err: unknown): SmtpReply {
  if (err instanceof SmtpReply) return err;
  if (err instanceof IdempotencyConflict) return err.reason === 'mismatch' ? reply.idempotencyKeyReused() : reply.idempotencyKeyBusy();
  // The domain was deleted between the check and the INSERT (the intake's foreign-key answer).
  if (err instanceof ApiError && err.code === 'BAD_REQUEST') return reply.headerSenderRefused(err.message);
  return reply.temporaryFailure();
}
