// `npm start`: everything on one machine for a first try. Migrates, starts the local SES emulator
// when no SES endpoint or AWS credentials are configured, seeds a demo team with a verified demo
// domain, starts the API and the worker, and prints an API key with a ready-to-paste curl.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApiKey, createDb, createDomain, createIdentityPort, createTeam, loadConfigOrExit } from '../packages/core/src';
import { ensureDatabase } from '../packages/core/src/db/admin';
import { migrateDeploy } from '../packages/core/src/db/prisma-cli';
import { startSesLocal } from './start-ses-local';

const DEMO_TEAM = 'Demo team';
const DEMO_DOMAIN = 'demo.example.com';

function hasAwsCredentials(): boolean {
  return Boolean(process.env.AWS_ACCESS_KEY_ID || process.env.AWS_PROFILE || existsSync(path.join(os.homedir(), '.aws/credentials')));
}

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

async function seedDemo(config: ReturnType<typeof loadConfigOrExit>) {
  const db = createDb(config.DATABASE_URL, 2);
  try {
    const team = (await db.team.findFirst({ where: { name: DEMO_TEAM }, orderBy: { id: 'asc' } })) ?? (await createTeam(db, DEMO_TEAM));
    const domain =
      (await db.domain.findUnique({ where: { name: DEMO_DOMAIN } })) ??
      (await createDomain({ db, config, identities: createIdentityPort(config, { db }) }, { teamId: team.id, name: DEMO_DOMAIN, verified: true }));
    const { apiKey } = await createApiKey(db, { teamId: team.id, name: `npm start ${new Date().toISOString()}`, permission: 'FULL' });
    return { teamId: team.id, domain: domain.name, apiKey };
  } finally {
    await db.$disconnect();
  }
}

async function main() {
  const config = loadConfigOrExit();
  const children: ChildProcess[] = [];
  const env: NodeJS.ProcessEnv = { ...process.env };

  console.log(`» migrating ${config.DATABASE_URL.replace(/\/\/[^@]*@/, '//***@')}`);
  await ensureDatabase(config.DATABASE_URL);
  migrateDeploy(config.DATABASE_URL, true);

  let sesViewer: string | null = null;
  if (!config.SES_ENDPOINT && !hasAwsCredentials()) {
    const port = config.SES_LOCAL_PORT;
    console.log(`» no SES_ENDPOINT and no AWS credentials: starting the local SES emulator on 127.0.0.1:${port}`);
    children.push(startSesLocal(port));
    env.SES_ENDPOINT = `http://127.0.0.1:${port}`;
    sesViewer = `http://127.0.0.1:${port}/`;
    await waitFor(`${sesViewer}store`, 15_000);
  }

  const seeded = await seedDemo(config);
  // `node --import tsx` (not the tsx CLI) so that our SIGTERM reaches each process itself.
  for (const app of ['api', 'worker']) {
    children.push(spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, `../apps/${app}/src/main.ts`)], { cwd: path.join(__dirname, '..'), env, stdio: ['ignore', 'inherit', 'inherit'] }));
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
  const banner = [
    '',
    '──────────────────────────────────────────────────────────────────────────────',
    ` mailrail is running at ${base}`,
    ` demo team ${seeded.teamId}, verified demo domain ${seeded.domain}`,
    ` API key: ${seeded.apiKey}`,
    '',
    ` curl -H "Authorization: Bearer ${seeded.apiKey}" ${base}/api/v1/emails`,
    '',
    ` curl -X POST ${base}/api/v1/emails \\`,
    `   -H "Authorization: Bearer ${seeded.apiKey}" -H "Content-Type: application/json" \\`,
    `   -d '{"from":"hello@${seeded.domain}","to":"you@example.org","subject":"Hello","text":"It works"}'`,
    sesViewer ? `\n sent mail is shown by the local SES emulator at ${sesViewer}` : '',
    '──────────────────────────────────────────────────────────────────────────────',
    '',
  ];
  console.log(banner.join('\n'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
