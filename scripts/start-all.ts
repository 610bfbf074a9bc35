// `npm start`: everything on one machine for a first try. Migrates, starts the local SES emulator
// when no SES endpoint or AWS credentials are configured, seeds a demo team with a verified demo
// domain and a dashboard admin, starts the API, the worker and the SMTP relay, and prints the
// dashboard's sign-in, an API key with a ready-to-paste curl and the SMTP settings.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { awsCredentialsSource } from '@mailrail/platform/config/aws-credentials';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { createDb } from '@mailrail/platform/db/client';
import { createDomain } from '@mailrail/domain/domains/add-domain';
import { createIdentityPort } from '@mailrail/domain/ses-identity/choose-adapter';
import { loadConfigOrExit } from '@mailrail/platform/config/load';
import { maskUrlCredentials } from '@mailrail/platform/text/trim';
import { SES_SIMULATOR_DOMAIN, SIMULATOR_TEST_ADDRESSES } from '@mailrail/domain/ses-events/event-simulator';
import { ensureDatabase } from '@mailrail/platform/db/admin';
import { migrateDeploy } from '@mailrail/tools/prisma/prisma-cli';
import { certificateFingerprint, generateDevCertificate } from '@mailrail/platform/tls/self-signed';
import { hashPassword } from '@mailrail/domain/users/passwords';
import { ensureUserInTeam } from '@mailrail/domain/users/users';
import { startSesLocal } from './start-ses-local';
import { ensureWebBuilt } from './web-build';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';

const DEMO_TEAM = 'Demo team';
const DEMO_DOMAIN = 'demo.example.com';
const DEMO_USER = `admin@${DEMO_DOMAIN}`;
// Dashboard mail (invitations, password resets) carries account-taking links: it leaves as the
// mail of a team of its own, with no members, API keys or webhooks, never as the demo team's.
const SYSTEM_MAIL_TEAM = 'mailrail dashboard mail';

async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`port ${port} did not open within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The SMTP relay's certificate: the operator's files when SMTP_TLS_CERT is set, else a
 * self-signed one made once into .cache/smtp-dev-tls/ and kept, so that a client told to trust
 * it keeps working across restarts. Returns where it is and its fingerprint, for the banner.
 */
async function smtpCertificate(env: NodeJS.ProcessEnv): Promise<{ file: string; fingerprint256: string; selfSigned: boolean }> {
  if (env.SMTP_TLS_CERT)
    return { file: env.SMTP_TLS_CERT, fingerprint256: certificateFingerprint(readFileSync(env.SMTP_TLS_CERT, 'utf8')), selfSigned: false };
  const dir = path.join(__dirname, '../.cache/smtp-dev-tls');
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  if (!existsSync(cert) || !existsSync(key)) {
    const generated = await generateDevCertificate('localhost');
    mkdirSync(dir, { recursive: true });
    writeFileSync(key, generated.key, { mode: 0o600 });
    writeFileSync(cert, generated.cert);
  }
  env.SMTP_TLS_CERT = cert;
  env.SMTP_TLS_KEY = key;
  return { file: cert, fingerprint256: certificateFingerprint(readFileSync(cert, 'utf8')), selfSigned: true };
}

async function seedDemo(config: ReturnType<typeof loadConfigOrExit>) {
  const db = createDb(config.DATABASE_URL, 2);
  try {
    const team = (await db.team.findFirst({ where: { name: DEMO_TEAM }, orderBy: { id: 'asc' } })) ?? (await createTeam(db, DEMO_TEAM));
    const domain =
      (await db.domain.findUnique({ where: { teamId_name: { teamId: team.id, name: DEMO_DOMAIN } } })) ??
      (await createDomain(
        { db, config, identities: createIdentityPort(config, { db }) },
        { teamId: team.id, name: DEMO_DOMAIN, verified: true },
      ));
    const { apiKey } = await createApiKey(db, { teamId: team.id, name: `npm start ${new Date().toISOString()}`, permission: 'FULL' });
    // The dashboard's demo admin gets a fresh password on every start, printed like the key.
    const password = randomBytes(9).toString('base64url');
    const { userId } = await ensureUserInTeam(db, { email: DEMO_USER, teamId: team.id, role: 'ADMIN' });
    await db.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(password) } });
    const mailTeam =
      (await db.team.findFirst({ where: { name: SYSTEM_MAIL_TEAM }, orderBy: { id: 'asc' } })) ?? (await createTeam(db, SYSTEM_MAIL_TEAM));
    if (!(await db.domain.findUnique({ where: { teamId_name: { teamId: mailTeam.id, name: DEMO_DOMAIN } } })))
      await createDomain(
        { db, config, identities: createIdentityPort(config, { db }) },
        { teamId: mailTeam.id, name: DEMO_DOMAIN, verified: true },
      );
    return { teamId: team.id, mailTeamId: mailTeam.id, domain: domain.name, apiKey, user: { email: DEMO_USER, password } };
  } finally {
    await db.$disconnect();
  }
}

async function main() {
  // Without an endpoint or credentials the local emulator runs: the API and the worker are
  // configured (and the SES event simulator decided) with its endpoint.
  const runEmulator = !process.env.SES_ENDPOINT && !awsCredentialsSource(process.env, { file: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (runEmulator) env.SES_ENDPOINT = `http://127.0.0.1:${process.env.SES_LOCAL_PORT || 8005}`;
  // Links in mail (dashboard invitations, unsubscribe) point at this server when PORT is not 3000.
  if (!env.PUBLIC_URL && env.PORT) env.PUBLIC_URL = `http://localhost:${env.PORT}`;
  const config = loadConfigOrExit(env);
  const children: ChildProcess[] = [];

  console.log(`» migrating ${maskUrlCredentials(config.DATABASE_URL)}`);
  await ensureDatabase(config.DATABASE_URL);
  migrateDeploy(config.DATABASE_URL, true);

  let sesViewer: string | null = null;
  if (runEmulator) {
    const port = config.SES_LOCAL_PORT;
    console.log(`» no SES_ENDPOINT and no AWS credentials: starting the local SES emulator on 127.0.0.1:${port}`);
    children.push(startSesLocal(port));
    sesViewer = `http://127.0.0.1:${port}/`;
    await waitFor(`${sesViewer}store`, 15_000);
  }

  // The dashboard the API serves at `/`: built on the first start and after its sources change.
  ensureWebBuilt(console.log);

  const seeded = await seedDemo(config);
  const smtpTls = await smtpCertificate(env);
  // Invitations and password resets leave as the dashboard mail team's (shown by the SES emulator).
  if (!env.DASHBOARD_MAIL_FROM && !env.DASHBOARD_MAIL_TEAM_ID) {
    env.DASHBOARD_MAIL_FROM = `mailrail <dashboard@${seeded.domain}>`;
    env.DASHBOARD_MAIL_TEAM_ID = String(seeded.mailTeamId);
  }
  // The demo admin runs this instance, so it is its operator: it may create teams in the dashboard.
  env.DASHBOARD_OPERATORS ??= seeded.user.email;
  // `node --import tsx` (not the tsx CLI) so that our SIGTERM reaches each process itself.
  const relay = !!(config.SMTP_PORT || config.SMTPS_PORT);
  for (const app of ['api', 'worker', ...(relay ? ['smtp' as const] : [])] as const) {
    children.push(
      spawn(process.execPath, [youngGenerationFlag(app), '--import', 'tsx', path.join(__dirname, `../apps/${app}/src/main.ts`)], {
        cwd: path.join(__dirname, '..'),
        env,
        stdio: ['ignore', 'inherit', 'inherit'],
      }),
    );
  }

  let stopping = false;
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => process.exit(code), 5000).unref();
    Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('exit', r))))).then(() => process.exit(code));
  };
  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));
  for (const c of children) c.on('exit', (code) => !stopping && (console.error(`» a process exited (${code}); stopping`), stopAll(1)));

  const base = `http://localhost:${config.PORT}`;
  await waitFor(`${base}/health`, 30_000);
  // (A port set to `any` is only known from the relay's log line: npm start does not wait for it.)
  for (const port of [config.SMTP_PORT, config.SMTPS_PORT].filter((p) => typeof p === 'number' && p > 0))
    await waitForPort(port as number, 30_000);
  const banner = [
    '',
    '──────────────────────────────────────────────────────────────────────────────',
    ` mailrail is running at ${base}`,
    ` dashboard: ${base}/  sign in as ${seeded.user.email} with password ${seeded.user.password}`,
    ` demo team ${seeded.teamId}, verified demo domain ${seeded.domain}`,
    ` API key: ${seeded.apiKey}`,
    '',
    ` curl -H "Authorization: Bearer ${seeded.apiKey}" ${base}/api/v1/emails`,
    '',
    ` curl -X POST ${base}/api/v1/emails \\`,
    `   -H "Authorization: Bearer ${seeded.apiKey}" -H "Content-Type: application/json" \\`,
    `   -d '{"from":"hello@${seeded.domain}","to":"you@example.org","subject":"Hello","text":"It works"}'`,
    ...smtpLines(config, seeded, smtpTls),
    sesViewer ? `\n sent mail is shown by the local SES emulator at ${sesViewer}` : '',
    ...(config.sesEventSimulator ? simulatorLines(config, seeded.domain) : []),
    '──────────────────────────────────────────────────────────────────────────────',
    '',
  ];
  console.log(banner.join('\n'));
}

/** How an SMTP client connects to the relay (docs/smtp.md). */
function smtpLines(
  config: ReturnType<typeof loadConfigOrExit>,
  seeded: { domain: string; apiKey: string },
  tls: { file: string; fingerprint256: string; selfSigned: boolean },
): string[] {
  const ports = [
    config.SMTP_PORT ? `${config.SMTP_PORT} (STARTTLS)` : '',
    config.SMTPS_PORT ? `${config.SMTPS_PORT} (implicit TLS)` : '',
  ].filter(Boolean);
  if (!ports.length) return [];
  const swaks = config.SMTP_PORT
    ? `swaks --server localhost:${config.SMTP_PORT} --tls`
    : `swaks --server localhost:${config.SMTPS_PORT} --tls-on-connect`;
  return [
    '',
    ` SMTP relay: host localhost, port ${ports.join(' or ')}, username mailrail, password the API key above`,
    ` ${tls.selfSigned ? 'self-signed ' : ''}certificate ${path.relative(process.cwd(), tls.file)}, SHA-256 ${tls.fingerprint256}`,
    ...(tls.selfSigned ? [' (clients must trust that file, or skip verification for this local trial)'] : []),
    ` ${swaks} --auth-user mailrail --auth-password ${seeded.apiKey} \\`,
    `   --from hello@${seeded.domain} --to you@example.org --header "Subject: Hello over SMTP"`,
  ];
}

/** The SES event simulator's test addresses (docs/events.md), and how to open or click. */
function simulatorLines(config: ReturnType<typeof loadConfigOrExit>, domain: string): string[] {
  const width = Math.max(...SIMULATOR_TEST_ADDRESSES.map((a) => a.localPart.length)) + `@${SES_SIMULATOR_DOMAIN}`.length;
  return [
    '',
    ` SES event simulator on: every message gets SES's events (Send, then Delivery after ${config.SES_EVENT_SIMULATOR_DELAY_MS} ms).`,
    ' Test addresses (the same local part at any domain works too, e.g. bounce@example.com):',
    ...SIMULATOR_TEST_ADDRESSES.map((a) => `   ${`${a.localPart}@${SES_SIMULATOR_DOMAIN}`.padEnd(width)}  ${a.events} → ${a.result}`),
    ` e.g. -d '{"from":"hello@${domain}","to":"bounce@${SES_SIMULATOR_DOMAIN}","subject":"Bounce","text":"x"}'`,
    ` opens and clicks: SES_ENDPOINT=${config.SES_ENDPOINT} npm run cli -- simulate open|click --email <emailId>`,
  ];
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
