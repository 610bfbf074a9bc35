import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { generateDevCertificate } from '@mailrail/platform/tls/self-signed';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { freePort } from '@mailrail/testing/free-port';
import { testRedisPrefix } from '@mailrail/testing/redis';
import { waitFor } from '@mailrail/testing/wait-for';

// The relay process itself (`node --import tsx apps/smtp/src/main.ts`): certificate files read
// again on SIGHUP, production refused without a certificate, SIGTERM exits 0.

const root = path.resolve(__dirname, '../../..');
let dir: string;
let databaseUrl: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'mailrail-smtp-main-'));
  databaseUrl = await createTestDatabase();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropDatabase(databaseUrl);
});

function startRelay(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'apps/smtp/src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      REDIS_PREFIX: testRedisPrefix(),
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: '0',
      SMTP_METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** The SHA-256 fingerprint of the certificate a new TLS session on `port` is shown. */
const servedFingerprint = (port: number) =>
  new Promise<string>((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.once('error', reject);
  });

it('reads the certificate files again on SIGHUP: new sessions get the renewed certificate', async () => {
  const [first, second] = await Promise.all([generateDevCertificate('localhost'), generateDevCertificate('localhost')]);
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  writeFileSync(cert, first.cert);
  writeFileSync(key, first.key);
  const port = await freePort();
  const relay = startRelay({ SMTPS_PORT: String(port), SMTP_TLS_CERT: cert, SMTP_TLS_KEY: key });
  try {
    await waitFor(() => relay.output().includes('mailrail SMTP relay listening'), { timeoutMs: 30_000, what: 'the relay to listen' });
    expect(await servedFingerprint(port)).toBe(first.fingerprint256);
    writeFileSync(cert, second.cert);
    writeFileSync(key, second.key);
    relay.child.kill('SIGHUP');
    await waitFor(() => relay.output().includes('SIGHUP: certificate read again'), { timeoutMs: 10_000, what: 'the reload' });
    expect(await servedFingerprint(port)).toBe(second.fingerprint256);
  } finally {
    relay.child.kill('SIGTERM');
  }
  expect(await relay.exited).toBe(0);
});

it('refuses to start in production without certificate files, saying what to set', async () => {
  const relay = startRelay({
    NODE_ENV: 'production',
    SECRET: 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0',
    SMTPS_PORT: String(await freePort()),
  });
  expect(await relay.exited).toBe(1);
  expect(relay.output()).toContain('SMTP_TLS_CERT and SMTP_TLS_KEY are required in production');
});
