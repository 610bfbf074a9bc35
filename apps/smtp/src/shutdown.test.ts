import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { redisEnvOf } from '@mailrail/testing/redis';
import { portIn, spawnListening, type ListeningChild } from '@mailrail/testing/spawn-listening';
import { startTestRelay, type TestRelay } from './testing/smtp-harness';

// SIGTERM to the relay process (`node --import tsx apps/smtp/src/main.ts`, what `npm run
// start:smtp` runs compiled) while 20 clients each send over their own connection: every message
// answered 250 is stored, every message answered otherwise is not, no message is cut off after
// its DATA, and the process exits 0. The clients then resend what was refused to a new relay
// process: every message ends up stored exactly once.

const SESSIONS = 20;
const PER_SESSION = 25;

let t: TestRelay;
let dir: string;
beforeAll(async () => {
  t = await startTestRelay({ API_RATE_LIMIT: '0' });
  dir = mkdtempSync(path.join(os.tmpdir(), 'mailrail-smtp-'));
  writeFileSync(path.join(dir, 'cert.pem'), t.certificate.cert);
  writeFileSync(path.join(dir, 'key.pem'), t.certificate.key);
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The relay process on a STARTTLS port of its own (SMTP_PORT=any), read from its "listening" line. */
async function spawnRelay(): Promise<{ relay: ListeningChild; port: number }> {
  const root = path.resolve(__dirname, '../../..');
  const relay = await spawnListening({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(root, 'apps/smtp/src/main.ts')],
    cwd: root,
    env: {
      ...process.env,
      // The test's Redis, cluster or one server (process.env carries REDIS_CLUSTER_NODES on a cluster run).
      ...redisEnvOf(t.config.redis),
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: t.databaseUrl,
      REDIS_PREFIX: t.config.REDIS_PREFIX,
      API_RATE_LIMIT: '0',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: 'any',
      SMTPS_PORT: '0',
      SMTP_METRICS_PORT: '0',
      SMTP_SERVER_NAME: 'localhost',
      SMTP_TLS_CERT: path.join(dir, 'cert.pem'),
      SMTP_TLS_KEY: path.join(dir, 'key.pem'),
    },
    message: 'mailrail SMTP relay listening',
  });
  return { relay, port: portIn(relay.listening, 'ports.starttls') };
}

interface Outcome {
  subject: string;
  emailId?: string;
  error?: { code?: string; responseCode?: number; command?: string };
}

it('loses nothing when SIGTERM arrives during 20 concurrent sessions', async () => {
  const { relay, port } = await spawnRelay();
  try {
    await sigtermDuringSessions(relay, port);
  } finally {
    await relay.stop('SIGKILL');
  }
});

async function sigtermDuringSessions(relay: ListeningChild, port: number) {
  const transports = Array.from({ length: SESSIONS }, () => t.transport({ pool: true, maxConnections: 1, port }));
  const outcomes: Outcome[] = [];
  let accepted = 0;
  let signalled = false;
  const sessions = transports.map(async (transport, s) => {
    for (let i = 0; i < PER_SESSION; i++) {
      const subject = `shutdown s${s} m${i}`;
      try {
        const info = await transport.sendMail({ from: 'hello@relay.example.com', to: `s${s}@dest.org`, subject, text: `message ${i}` });
        outcomes.push({ subject, emailId: /OK ([0-9a-z]+)$/.exec(info.response)?.[1] });
        // SIGTERM once the sessions are in full swing.
        if (++accepted === SESSIONS * 3 && !signalled) {
          signalled = true;
          relay.child.kill('SIGTERM');
        }
      } catch (err) {
        const e = err as { code?: string; responseCode?: number; command?: string };
        outcomes.push({ subject, error: { code: e.code, responseCode: e.responseCode, command: e.command } });
      }
    }
  });
  await Promise.all(sessions);
  for (const transport of transports) transport.close();
  expect(signalled).toBe(true);
  expect(await relay.exited).toBe(0);

  const ok = outcomes.filter((o) => o.emailId);
  const refused = outcomes.filter((o) => o.error);
  expect(ok.length + refused.length).toBe(SESSIONS * PER_SESSION);
  expect(refused.length).toBeGreaterThan(0);
  // Refused only by a 421 or a closed port, never cut off after DATA.
  for (const o of refused) {
    const shutdownReply = o.error!.responseCode === 421;
    const closedPort = o.error!.code === 'ESOCKET' || o.error!.code === 'ECONNECTION';
    expect({ subject: o.subject, error: o.error, acceptable: (shutdownReply || closedPort) && o.error!.command !== 'DATA' }).toMatchObject({
      acceptable: true,
    });
  }
  // One JSON log line per accepted message, with its email id.
  const logged = new Set(
    relay.lines
      .map((l) => JSON.parse(l) as { msg?: string; emailId?: string })
      .filter((l) => l.msg === 'smtp message accepted')
      .map((l) => l.emailId),
  );
  expect(ok.filter((o) => !logged.has(o.emailId))).toEqual([]);
  const rows = await t.db.email.findMany({ where: { subject: { startsWith: 'shutdown ' } }, select: { id: true, subject: true } });
  expect(new Map(rows.map((r) => [r.subject, r.id]))).toEqual(new Map(ok.map((o) => [o.subject, o.emailId])));

  // The clients retry what was refused against a new relay: everything is stored, once.
  const again = await spawnRelay();
  try {
    const retry = t.transport({ pool: true, maxConnections: 4, port: again.port });
    await Promise.all(
      refused.map((o) => retry.sendMail({ from: 'hello@relay.example.com', to: 'retry@dest.org', subject: o.subject, text: 'retried' })),
    );
    retry.close();
    const subjects = (await t.db.email.findMany({ where: { subject: { startsWith: 'shutdown ' } }, select: { subject: true } })).map(
      (r) => r.subject,
    );
    expect(subjects.length).toBe(SESSIONS * PER_SESSION);
    expect(new Set(subjects).size).toBe(SESSIONS * PER_SESSION);
    expect(await again.relay.stop('SIGTERM')).toBe(0);
  } finally {
    await again.relay.stop('SIGKILL');
  }
}
