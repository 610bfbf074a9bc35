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
