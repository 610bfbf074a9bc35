import { z } from 'zod';

// The one definition of an email address field, shared by emails, batch, campaigns, contact-book
// double opt-in and the worker: `addr@domain` or `Name <addr@domain>` (also `"Quoted, Name" <addr>`),
// as useSend passes them to SES and Resend documents. A hand scan in one pass, no regex with
// overlapping quantifiers, and every length capped before any work is done.

/** RFC 5321: a forward-path is at most 256 octets including the angle brackets. */
export const MAX_ADDRESS_LENGTH = 254;
/** A display name longer than this is not a name. */
export const MAX_DISPLAY_NAME_LENGTH = 256;
/** A whole `Name <addr>` field must fit on one RFC 5322 header line. */
export const MAX_ADDRESS_FIELD_LENGTH = 998;

export interface ParsedAddress {
  /** Display name without quotes or escapes; null when there is none. */
  name: string | null;
  /** The address as given (its case is kept: the local part may be case-sensitive). */
  address: string;
  /** The domain of the address, lower-cased. */
  domain: string;
}

export const ADDRESS_FIELD_RULE = 'must be an email address or "Name <address>"';

// z.email()'s own pattern, tested directly: the same rule without a zod parse (a result object
// per call) for every address of every request. address.test.ts holds it to z.email().
const EMAIL_FORMAT = z.regexes.email;
// C0 controls (CR, LF, NUL, TAB...) and DEL: never part of an address or a name, so no header injection.
const CONTROL = /[\u0000-\u001f\u007f]/; // eslint-disable-line no-control-regex

/** A bare address that SES will take: the format rule of z.email(), at most 254 characters. */
export function isEmailAddress(address: string): boolean {
  return address.length <= MAX_ADDRESS_LENGTH && !CONTROL.test(address) && EMAIL_FORMAT.test(address);
}

/** The name of a `"..."` display name with its backslash escapes undone; null when the quoting is broken. */
function unquote(quoted: string): string | null {
  let out = '';
  for (let i = 1; i < quoted.length - 1; i++) {
    const c = quoted[i];
    if (c === '\\') {
      i++;
      if (i >= quoted.length - 1) return null;
      out += quoted[i];
    } else if (c === '"') {
      return null;
    } else {
      out += c;
    }
  }
  return out;
}

function parseDisplayName(raw: string): string | null | undefined {
  const name = raw.trim();
  if (name === '') return null;
  if (name.length > 1 && name.startsWith('"') && name.endsWith('"')) return unquote(name) ?? undefined;
  // Unquoted: anything but quotes and angle brackets (commas are fine: the MIME builder quotes them).
  for (const c of name) if (c === '"' || c === '<' || c === '>') return undefined;
  return name;
}

/**
 * `addr` or `Name <addr>` split into its parts; null when it is neither, when the address is not
 * valid, when a control character (CR, LF...) appears anywhere, or when a length cap is exceeded.
 */
export function parseAddress(input: string): ParsedAddress | null {
  if (typeof input !== 'string' || input.length > MAX_ADDRESS_FIELD_LENGTH || CONTROL.test(input)) return null;
  const field = input.trim();
  let name: string | null = null;
  let address = field;
  if (field.endsWith('>')) {
    const open = field.lastIndexOf('<');
    if (open < 0) return null;
    address = field.slice(open + 1, -1);
    const parsedName = parseDisplayName(field.slice(0, open));
    if (parsedName === undefined) return null;
    name = parsedName;
    if (name !== null && name.length > MAX_DISPLAY_NAME_LENGTH) return null;
  }
  if (!isEmailAddress(address)) return null;
  return { name, address, domain: address.slice(address.lastIndexOf('@') + 1).toLowerCase() };
}

/**
 * `Name <addr>` (the name quoted, with backslash escapes, when it holds a quote, an angle bracket
 * or a backslash) or the bare address: the inverse of parseAddress, for addresses read from a
 * message's headers (SMTP relay). Control characters in the name become spaces.
 */
export function formatAddress(name: string | null | undefined, address: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = (name ?? '').replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  if (!clean) return address;
  const plain = !/["<>\\]/.test(clean);
  return `${plain ? clean : `"${clean.replace(/["\\]/g, '\\$&')}"`} <${address}>`;
}

/** The bare address of a stored `addr` or `Name <addr>` (for suppressions, SES envelopes, counts). */
export function bareAddress(field: string): string {
  const trimmed = field.trim();
  // Without `<...>` the answer is the trimmed field whether or not it parses: no need to parse.
  if (!trimmed.endsWith('>')) return trimmed;
  return parseAddress(field)?.address ?? trimmed;
}

/**
 * `"Name" <a@b.c>` or `a@b.c` → `a@b.c`, lower-cased and trimmed: how recipients are compared with
 * the suppression list, SES's per-recipient events and the exact recipient search.
 */
export function normaliseAddress(address: string): string {
  return bareAddress(address).toLowerCase();
}

/** A zod string field holding one `addr` or `Name <addr>`, capped so OpenAPI shows maxLength. */
export const addressField = () =>
  z
    .string()
    .max(MAX_ADDRESS_FIELD_LENGTH, { message: `must be at most ${MAX_ADDRESS_FIELD_LENGTH} characters`, abort: true })
    .refine((v) => parseAddress(v) !== null, ADDRESS_FIELD_RULE)
    .transform((v) => v.trim())
    .describe('`addr@domain` or `Name <addr@domain>`; the name may be quoted and may be non-ASCII');

/** How long a stored contact or suppression address may be (RFC 3696's 64 + 1 + 255). */
export const MAX_STORED_ADDRESS_LENGTH = 320;

/**
 * A bare recipient address as contacts and suppressions store it: trimmed and lower-cased before
 * the format check, since both are unique per team (or book) whatever the case.
 */
export const normalisedEmailField = () =>
  z.string().max(MAX_STORED_ADDRESS_LENGTH).trim().toLowerCase().pipe(z.email('Invalid email address').max(MAX_STORED_ADDRESS_LENGTH));
