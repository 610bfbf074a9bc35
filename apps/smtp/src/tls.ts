import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Config } from '@mailrail/platform/config/schema';
import { certificateFingerprint, generateDevCertificate } from '@mailrail/platform/tls/self-signed';
import type { TlsFiles } from './relay';

class TlsSetupError extends Error {}

export interface RelayTls {
  tls: TlsFiles;
  source: 'files' | 'self-signed';
  fingerprint256: string;
}

/** The certificate and key named by SMTP_TLS_CERT / SMTP_TLS_KEY, read now (at start and on SIGHUP). */
export function readTlsFiles(config: Pick<Config, 'SMTP_TLS_CERT' | 'SMTP_TLS_KEY'>): RelayTls {
  const cert = readFileSync(config.SMTP_TLS_CERT!, 'utf8');
  const key = readFileSync(config.SMTP_TLS_KEY!, 'utf8');
  return { tls: { cert, key }, source: 'files', fingerprint256: certificateFingerprint(cert) };
}

/**
 * The files when configured; else a self-signed certificate made now, in development (or in
 * production with SMTP_TLS_SELF_SIGNED, for a trial). Production without either is refused:
 * clients would send API keys to a server they cannot verify.
 */
export async function relayTls(config: Config): Promise<RelayTls> {
  if (config.SMTP_TLS_CERT && config.SMTP_TLS_KEY) return readTlsFiles(config);
  if (config.NODE_ENV === 'production' && !config.SMTP_TLS_SELF_SIGNED) {
    throw new TlsSetupError(
      'SMTP_TLS_CERT and SMTP_TLS_KEY are required in production (or SMTP_TLS_SELF_SIGNED=true for a trial with an unverified certificate)',
    );
  }
  const generated = await generateDevCertificate(config.SMTP_SERVER_NAME ?? os.hostname());
  return { tls: { cert: generated.cert, key: generated.key }, source: 'self-signed', fingerprint256: generated.fingerprint256 };
}
