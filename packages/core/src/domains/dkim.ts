import { generateKeyPairSync } from 'node:crypto';

/** RSA 2048 DKIM key pair: the public key as base64 SPKI (the `p=` value), the private as PEM. */
export function generateDkimKeyPair(): { publicKey: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}
