import MailComposer from 'nodemailer/lib/mail-composer';
import { EMAIL_ID_HEADER, HEADER_NAME, isReservedHeader, isSafeHeaderValue } from '@mailrail/domain/emails/headers';
import { parseAddress } from '@mailrail/domain/emails/address';

// Builds the raw MIME message of one email. Everything SES needs is inside it except the bcc
// recipients, which travel only in the SES Destination (a Bcc header would reveal them).

export interface EmailToRender {
  id: string;
  from: string;
  to: string[];
  cc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  /** Email.headers: a JSON object of custom headers (or its JSON text). */
  headers: unknown;
  /** Email.attachments: a JSON array of {filename, content (base64)} (or its JSON text). */
  attachments: unknown;
  unsubUrl: string | null;
  /** SES message id of the email this one replies to, when it was sent. */
  inReplyToSesId: string | null;
}

const fromJson = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
};

/** Custom headers that are safe to add: the API's rules (core emails/headers.ts) applied again to the stored row. */
export function customHeaders(value: unknown): Record<string, string> {
  const parsed = fromJson(value);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(parsed)) {
    if (typeof v !== 'string' && typeof v !== 'number') continue;
    const text = String(v);
    if (!HEADER_NAME.test(name) || !isSafeHeaderValue(text) || isReservedHeader(name)) continue;
    out[name] = text;
  }
  return out;
}

function attachmentsOf(value: unknown): { filename: string; content: string; encoding: 'base64' }[] {
  const parsed = fromJson(value);
  if (!Array.isArray(parsed)) return [];
  return parsed
    .filter((a): a is { filename: string; content: string } => !!a && typeof a.filename === 'string' && typeof a.content === 'string')
    .map((a) => ({ filename: a.filename, content: a.content, encoding: 'base64' as const }));
}

/** Merges headers case-insensitively; later sources win. */
function mergeHeaders(...sources: Record<string, string>[]): Record<string, string> {
  const byLowerName = new Map<string, [string, string]>();
  for (const source of sources) for (const [k, v] of Object.entries(source)) byLowerName.set(k.toLowerCase(), [k, v]);
  return Object.fromEntries(byLowerName.values());
}

/**
 * `addr` or `Name <addr>` as nodemailer's {name, address}: the composer then quotes the name or
 * encodes it (RFC 2047) itself, and a comma in a name cannot split it into two recipients.
 */
function mimeAddress(field: string): { name: string; address: string } | string {
  const parsed = parseAddress(field);
  return parsed ? { name: parsed.name ?? '', address: parsed.address } : field;
}

/**
 * The headers a message carries unless its custom headers set them (a reply's threading, the
 * RFC 8058 unsubscribe headers of bulk mail): not reserved, a client may choose its own.
 */
export function defaultHeaders(email: Pick<EmailToRender, 'id' | 'inReplyToSesId' | 'unsubUrl'>): Record<string, string> {
  const defaults: Record<string, string> = { 'X-Entity-Ref-ID': email.id };
  if (email.inReplyToSesId) {
    const ref = `<${email.inReplyToSesId}@email.amazonses.com>`;
    defaults['In-Reply-To'] = ref;
    defaults['References'] = ref;
  }
  if (email.unsubUrl) {
    // RFC 8058 one-click unsubscribe; Precedence marks it as bulk mail for auto-responders.
    defaults['List-Unsubscribe'] = `<${email.unsubUrl}>`;
    defaults['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
    defaults['Precedence'] = 'bulk';
  }
  return defaults;
}

export async function buildRawMessage(email: EmailToRender): Promise<Buffer> {
  // Custom headers win over the defaults; the email id header always says the truth.
  const headers = mergeHeaders(defaultHeaders(email), customHeaders(email.headers), { [EMAIL_ID_HEADER]: email.id });

  const composer = new MailComposer({
    from: mimeAddress(email.from),
    to: email.to.map(mimeAddress),
    cc: email.cc.length ? email.cc.map(mimeAddress) : undefined,
    replyTo: email.replyTo.length ? email.replyTo.map(mimeAddress) : undefined,
    subject: email.subject,
    text: email.text ?? (email.html ? undefined : ''),
    html: email.html ?? undefined,
    attachments: attachmentsOf(email.attachments),
    headers,
    // Stored content only: never read local files or fetch URLs named by a sender.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile().build();
}
