import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { generateDevCertificate } from '@mailrail/platform/tls/self-signed';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { portIn, spawnListening, withListening } from '@mailrail/testing/spawn-listening';
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

const relayCommand = (env: Record<string, string>) => ({
  command: process.execPath,
  args: ['--import', 'tsx', path.join(root, 'apps/smtp/src/main.ts')],
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
  message: 'mailrail SMTP relay listening',
});

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
  await withListening(relayCommand({ SMTPS_PORT: 'any', SMTP_TLS_CERT: cert, SMTP_TLS_KEY: key }), async (relay) => {
    const port = portIn(relay.listening, 'ports.tls');
    expect(await servedFingerprint(port)).toBe(first.fingerprint256);
    writeFileSync(cert, second.cert);
    writeFileSync(key, second.key);
    relay.child.kill('SIGHUP');
    await waitFor(() => relay.output().includes('SIGHUP: certificate read again'), { timeoutMs: 10_000, what: 'the reload' });
    expect(await servedFingerprint(port)).toBe(second.fingerprint256);
    expect(await relay.stop('SIGTERM')).toBe(0);
  });
});

it('refuses to start in production without certificate files, saying what to set', async () => {
  const start = spawnListening(
    relayCommand({ NODE_ENV: 'production', SECRET: 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0', SMTPS_PORT: 'any' }),
  );
  // spawnListening rejects with the child's exit code and output when it exits before listening.
  await expect(start).rejects.toThrow(/exited \(1\)[\s\S]*SMTP_TLS_CERT and SMTP_TLS_KEY are required in production/);
});
