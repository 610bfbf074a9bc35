import { X509Certificate, type KeyObject } from 'node:crypto';
import SnsPayloadValidator from 'sns-payload-validator';
import type { HttpGet } from './http-fetch';

// The signature check itself (the canonical string per message type, SHA1 for SignatureVersion 1,
// SHA256 for 2) is sns-payload-validator's. We fetch the certificates ourselves and put them in
// its cache: with a timeout and a status check, so a failed download is never cached as a cert.
// The cache holds the certificate's parsed public key (the validator hands the cached value to
// crypto's verify, which takes a KeyObject): parsing the PEM on every message cost 4x the check.
const CERT_URL = /^https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/SimpleNotificationService-[a-zA-Z0-9]{32}\.pem$/;

export class SnsRejected extends Error {}
export class SnsCertificateUnavailable extends Error {}

export interface SnsVerifier {
  /** Resolves for a genuine SNS message; SnsRejected for a forged one. */
  verify(payload: Record<string, unknown>): Promise<void>;
  preloadCertificate(url: string, pem: string): void;
}

interface CertCache {
  get(url: string): KeyObject | undefined;
  set(url: string, key: KeyObject): void;
}

function publicKeyOf(pem: string): KeyObject {
  try {
    return new X509Certificate(pem).publicKey;
  } catch {
    throw new SnsRejected('SigningCertURL did not return a certificate');
  }
}

export function createSnsVerifier(httpGet: HttpGet, maxCerts = 100): SnsVerifier {
  const validator = new SnsPayloadValidator({ useCache: true, maxCerts });
  const cache = (validator as unknown as { certCache: CertCache }).certCache;
  const downloads = new Map<string, Promise<void>>();

  async function download(url: string) {
    let res: { status: number; body: string };
    try {
      res = await httpGet(url);
    } catch (err) {
      throw new SnsCertificateUnavailable(`could not fetch ${url}: ${(err as Error).message}`);
    }
    if (res.status !== 200) throw new SnsCertificateUnavailable(`could not fetch ${url}: HTTP ${res.status}`);
    cache.set(url, publicKeyOf(res.body));
  }

  function ensureCertificate(url: string): Promise<void> {
    if (cache.get(url)) return Promise.resolve();
    let pending = downloads.get(url);
    if (!pending) {
      pending = download(url).finally(() => downloads.delete(url));
      downloads.set(url, pending);
    }
    return pending;
  }

  return {
    async verify(payload) {
      const certUrl = payload.SigningCertURL;
      if (typeof certUrl !== 'string' || !CERT_URL.test(certUrl)) {
        throw new SnsRejected('SigningCertURL is not an Amazon SNS certificate URL');
      }
      await ensureCertificate(certUrl);
      try {
        await validator.validate(payload as unknown as SnsPayloadValidator.SnsPayload);
      } catch {
        throw new SnsRejected('Invalid SNS message signature');
      }
    },
    preloadCertificate(url, pem) {
      cache.set(url, publicKeyOf(pem));
    },
  };
}
