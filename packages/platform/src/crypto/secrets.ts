import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function hmacHex(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

export function safeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/**
 * Compares a presented secret (a bearer token) with the configured one in constant time: both are
 * hashed first, so neither the content nor the length of the expected value leaks through timing.
 */
export function secretMatches(candidate: string | undefined, expected: string): boolean {
  if (candidate === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(candidate), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header, if that is what the header holds. */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined;
}

function keyFrom(secret: string): Buffer {
  return createHash('sha256').update(`mailrail-encryption:${secret}`).digest();
}

/** AES-256-GCM; the result is `v1.<iv>.<tag>.<ciphertext>` in base64url parts. */
export function encryptSecret(secret: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFrom(secret), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export function decryptSecret(secret: string, sealed: string): string {
  const [v, iv, tag, body] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('not an encrypted value');
  const decipher = createDecipheriv('aes-256-gcm', keyFrom(secret), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
