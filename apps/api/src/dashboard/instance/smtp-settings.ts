import { readFile } from 'node:fs/promises';
import { SMTP_USERNAME } from '@mailrail/domain/teams/smtp-usernames';
import { certificateFingerprint } from '@mailrail/platform/tls/self-signed';
import type { ApiDeps } from '../../deps';

// The SMTP page: what an application needs to reach the relay, from the platform configuration the
// relay itself reads (docs/smtp.md). The API reads the same SMTP_TLS_CERT file for the
// fingerprint; a relay that makes its own self-signed certificate at start logs it instead.

type SmtpDeps = Pick<ApiDeps, 'config' | 'log'>;

async function fingerprintOf(file: string | undefined, log: SmtpDeps['log']) {
  if (!file) return null;
  try {
    return certificateFingerprint(await readFile(file, 'utf8'));
  } catch (err) {
    log.warn({ err, file }, 'SMTP_TLS_CERT could not be read for the SMTP settings page');
    return null;
  }
}

export async function smtpSettings(deps: SmtpDeps) {
  const { config } = deps;
  const ports = [
    ...(typeof config.SMTP_PORT === 'number' && config.SMTP_PORT > 0 ? [{ port: config.SMTP_PORT, security: 'STARTTLS' as const }] : []),
    ...(typeof config.SMTPS_PORT === 'number' && config.SMTPS_PORT > 0 ? [{ port: config.SMTPS_PORT, security: 'TLS' as const }] : []),
  ];
  const fingerprint256 = await fingerprintOf(config.SMTP_TLS_CERT, deps.log);
  return {
    // The name clients connect to and the certificate must carry; without SMTP_SERVER_NAME, the
    // host of PUBLIC_URL (the relay usually runs beside the API).
    host: config.SMTP_SERVER_NAME ?? new URL(config.PUBLIC_URL).hostname,
    ports,
    username: SMTP_USERNAME,
    certificate: config.SMTP_TLS_CERT
      ? { source: 'FILE' as const, fingerprint256 }
      : { source: 'GENERATED_AT_START' as const, fingerprint256: null },
  };
}
