import { createVerify, X509Certificate, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { HttpGet } from './http-fetch';

// SNS signature check with node:crypto: the canonical string of the message type, SHA1withRSA for
// SignatureVersion 1, SHA256withRSA for 2, with the public key of the certificate at
// SigningCertURL. Only Amazon SNS certificate URLs are fetched; the certificates live in a
// bounded LRU cache, and new downloads have a per-minute budget, so posts naming many
// certificate URLs cannot make us fetch without limit or hold memory without limit.
const CERT_URL = /^https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/SimpleNotificationService-[a-zA-Z0-9]{32}\.pem$/;

/** SNS's signed fields per message type, in the order of the string to sign. */
const SIGNED_FIELDS: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

export class SnsRejected extends Error {}
export class SnsCertificateUnavailable extends Error {}

export interface SnsVerifier {
  /** Resolves for a genuine SNS message; SnsRejected for a forged one. */
  verify(payload: Record<string, unknown>): Promise<void>;
  preloadCertificate(url: string, pem: string): void;
  /** Certificates held in memory now (never more than maxCerts). */
  cachedCertificates(): number;
}

export interface SnsVerifierOptions {
  /** Most certificates kept (SNS uses one or two per region). */
  maxCerts?: number;
  certTtlMs?: number;
  /** Most certificate downloads started per minute; beyond that the post gets a 503 and SNS retries. */
  maxDownloadsPerMinute?: number;
  now?: () => number;
}

function publicKeyOf(pem: string): KeyObject {
  try {
    return new X509Certificate(pem).publicKey;
  } catch {
    throw new SnsRejected('SigningCertURL did not return a certificate');
  }
}

/** The string SNS signs: "Key\nValue\n" for each signed field present (Subject only when given). */
export function snsStringToSign(payload: Record<string, unknown>): string | null {
  const fields = SIGNED_FIELDS[String(payload.Type)];
  if (!fields) return null;
  let text = '';
  for (const key of fields) {
    const value = payload[key];
    if (value === undefined || value === null) {
      if (key === 'Subject') continue;
      return null;
    }
    if (typeof value !== 'string') return null;
    text += `${key}\n${value}\n`;
  }
  return text;
}

export function createSnsVerifier(httpGet: HttpGet, opts: SnsVerifierOptions = {}): SnsVerifier {
  const now = opts.now ?? Date.now;
  // Certificate URLs come from the request: at most maxCerts keys are kept (least recently used
  // out first), each for certTtlMs on the injected clock.
  const cache = new LRUCache<string, KeyObject>({
    max: opts.maxCerts ?? 50,
    ttl: opts.certTtlMs ?? 24 * 3600_000,
    ttlResolution: 0,
    perf: { now },
  });
  const maxDownloads = opts.maxDownloadsPerMinute ?? 30;
  const downloads = new Map<string, Promise<KeyObject>>();
  let budget = { windowStart: 0, used: 0 };

  function takeDownloadSlot(): boolean {
    const t = now();
    if (t - budget.windowStart >= 60_000) budget = { windowStart: t, used: 0 };
    if (budget.used >= maxDownloads) return false;
    budget.used++;
    return true;
  }

  async function download(url: string): Promise<KeyObject> {
    let res: { status: number; body: string };
    try {
      res = await httpGet(url);
    } catch (err) {
      throw new SnsCertificateUnavailable(`could not fetch ${url}: ${(err as Error).message}`);
    }
    if (res.status !== 200) throw new SnsCertificateUnavailable(`could not fetch ${url}: HTTP ${res.status}`);
    const key = publicKeyOf(res.body);
    cache.set(url, key);
    return key;
  }

  function certificate(url: string): Promise<KeyObject> {
    const hit = cache.get(url);
    if (hit) return Promise.resolve(hit);
    let pending = downloads.get(url);
    if (!pending) {
      if (!takeDownloadSlot()) return Promise.reject(new SnsCertificateUnavailable('too many new SNS certificate URLs, retry later'));
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
      const algorithm = payload.SignatureVersion === '1' ? 'RSA-SHA1' : payload.SignatureVersion === '2' ? 'RSA-SHA256' : null;
      const text = snsStringToSign(payload);
      if (!algorithm || text === null || typeof payload.Signature !== 'string') throw new SnsRejected('Invalid SNS message signature');
      const key = await certificate(certUrl);
      let valid = false;
      try {
        valid = createVerify(algorithm).update(text, 'utf8').verify(key, payload.Signature, 'base64');
      } catch {
        valid = false;
      }
      if (!valid) throw new SnsRejected('Invalid SNS message signature');
    },
    preloadCertificate(url, pem) {
      cache.set(url, publicKeyOf(pem));
    },
    cachedCertificates: () => cache.size,
  };
}
