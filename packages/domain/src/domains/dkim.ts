import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generateRsaKeyPair = promisify(generateKeyPair);

/**
 * RSA 2048 DKIM key pair: the public key as base64 SPKI (the `p=` value), the private as PEM.
 * Asynchronous: making the key takes 0.1–0.3 s of CPU, which runs on libuv's thread pool instead
 * of the event loop, so requests (and /health) are not stalled while domains are added.
 */
export async function generateDkimKeyPair(): Promise<{ publicKey: string; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateRsaKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}
