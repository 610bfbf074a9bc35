import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn in blocks: one syscall per few hundred ids instead of one per id
// (ids are minted on the hot send path).
const POOL_SIZE = 8192;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextByte(): number {
  if (offset >= POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++];
}

/** A random lowercase alphanumeric id (about 124 bits for the default 24 characters). */
export function newId(length = 24): string {
  let out = '';
  while (out.length < length) {
    const b = nextByte();
    // 252 = 7 * 36: rejecting bytes above it keeps every character equally likely.
    if (b < 252) out += ALPHABET[b % 36];
  }
  return out;
}

// Email ids are time-ordered, so the email log can be partitioned by id (docs/email-log.md): the
// same 24 characters and alphabet as newId, made of a fixed marker "000", the creation time in
// milliseconds (9 base-36 digits, enough until the year 5188) and 12 random characters (62 bits
// per millisecond). Random ids minted before (legacy) start with "000" once in 46,656 and fall in
// the years the partitions cover once in about two million: the migration gives those their own
// day partitions.
const TIME_ID_MARKER = '000';
const TIME_DIGITS = 9;
const TIME_ID_RANDOM = 12;

/** The first characters of every email id minted at `ms` (ids of later instants sort after it). */
export function emailIdPrefixAt(ms: number): string {
  return TIME_ID_MARKER + Math.max(0, Math.floor(ms)).toString(36).padStart(TIME_DIGITS, '0');
}

/** A new email id: sorts by creation time (to the millisecond), unique by its random tail. */
export function newEmailId(now: Date): string {
  return emailIdPrefixAt(now.getTime()) + newId(TIME_ID_RANDOM);
}

/**
 * Ids at or above this sort after every email id minted before 2100: the random ids of emails
 * created before ids were time-ordered live there, in the "Email_legacy" partition.
 */
export const LEGACY_EMAIL_IDS_FROM = emailIdPrefixAt(Date.UTC(2100, 0, 1));

/** Below this no time-ordered id (minted after 2020) sorts: a random legacy id that does lands in the DEFAULT partition. */
export const TIME_ORDERED_EMAIL_IDS_FROM = emailIdPrefixAt(Date.UTC(2020, 0, 1));

/** The instant a time-ordered email id was minted at, or null for a random (legacy) id. */
export function emailIdTime(id: string): Date | null {
  if (id.length !== TIME_ID_MARKER.length + TIME_DIGITS + TIME_ID_RANDOM || !id.startsWith(TIME_ID_MARKER)) return null;
  return new Date(parseInt(id.slice(TIME_ID_MARKER.length, TIME_ID_MARKER.length + TIME_DIGITS), 36));
}
