import type * as Argon2 from '@node-rs/argon2';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';

// argon2id (the library's default algorithm; its Algorithm enum is a const enum that isolated
// modules cannot read) with its default cost: 19 MiB, 2 passes, 1 lane, OWASP's recommended
// minimum. Stored in PHC form, so the parameters travel with each hash and can be raised later.
const OPTIONS = {} as const;
// The native addon is loaded by the first sign-in, not at start-up.
const argon2 = loadOnFirstUse<typeof Argon2>('@node-rs/argon2');

export const MIN_PASSWORD_LENGTH = 10;
/** Hashing cost grows with the input; nobody types more. */
export const MAX_PASSWORD_LENGTH = 256;

export function hashPassword(password: string): Promise<string> {
  return argon2().hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await argon2().verify(passwordHash, password);
  } catch {
    // A malformed stored hash is a wrong password, not a 500.
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * The same work as checking a real password, for sign-ins of addresses with no account (or no
 * password): the answer time must not tell whether an email exists.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('mailrail-dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
  return false;
}
