import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `count` random lowercase alphanumeric ids, like newId() but drawn from one random buffer: a bulk
 * request needs tens of thousands of ids, and one randomBytes call per id costs more than the SQL.
 */
export function newIds(count: number, length = 24): string[] {
  const ids = new Array<string>(count);
  let pool = randomBytes(Math.ceil(count * length * 1.05) + 64);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    let id = '';
    while (id.length < length) {
      if (pos === pool.length) {
        pool = randomBytes(4096);
        pos = 0;
      }
      const byte = pool[pos++];
      // 252 = 7 * 36: rejecting bytes above it keeps every character equally likely.
      if (byte < 252) id += ALPHABET[byte % 36];
    }
    ids[i] = id;
  }
  return ids;
}

/**
 * `count` 24-character ids that sort by creation time: 9 base-36 characters of milliseconds, then
 * 15 random ones (about 77 bits). Contacts are listed and walked by id; time-ordered ids keep a
 * bulk insert at the right edge of the primary-key index instead of scattered over it, and put a
 * page of contacts on neighbouring heap pages.
 */
export function newContactIds(count: number, now = Date.now()): string[] {
  const prefix = now.toString(36).padStart(9, '0');
  return newIds(count, 15).map((random) => prefix + random);
}
