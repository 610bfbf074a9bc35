import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A random lowercase alphanumeric id (about 124 bits for the default 24 characters). */
export function newId(length = 24): string {
  const bytes = randomBytes(length);
  let out = '';
  // 252 = 7 * 36: rejecting bytes above it keeps every character equally likely.
  for (let i = 0; out.length < length; i++) {
    if (i >= bytes.length) return out + newId(length - out.length);
    if (bytes[i] < 252) out += ALPHABET[bytes[i] % 36];
  }
  return out;
}
