import { newId } from '../ids';

/**
 * A 24-character lowercase id that sorts by creation time: 9 base-36 characters of milliseconds,
 * then 15 random ones (about 77 bits). Contacts are listed and walked by id; time-ordered ids keep
 * a bulk insert at the right edge of the primary-key index instead of scattered over it, and make
 * a page of contacts sit on neighbouring heap pages.
 */
export function newContactId(now = Date.now()): string {
  return now.toString(36).padStart(9, '0') + newId(15);
}
