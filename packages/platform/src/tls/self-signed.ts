import { X509Certificate } from 'node:crypto';
import selfsigned from 'selfsigned';

// A development TLS certificate for the SMTP relay when no certificate files are configured.
// node:crypto cannot issue X.509 certificates and the slim Docker image has no openssl binary,
// so the certificate is made by `selfsigned` (pure JavaScript, on @peculiar/x509).

export interface DevCertificate {
  cert: string;
  key: string;
  /** SHA-256 fingerprint as clients show it (AB:CD:...), to pin or compare. */
  fingerprint256: string;
}

/** A self-signed RSA 2048 / SHA-256 certificate for `hostName`, localhost, 127.0.0.1 and ::1, valid a year. */
export async function generateDevCertificate(hostName: string): Promise<DevCertificate> {
  const names = [...new Set([hostName, 'localhost'])];
  const pems = await selfsigned.generate([{ name: 'commonName', value: hostName }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...names.map((value) => ({ type: 2 as const, value })), { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private, fingerprint256: certificateFingerprint(pems.cert) };
}

/** SHA-256 fingerprint of a PEM certificate (the first of a chain). */
export const certificateFingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;
