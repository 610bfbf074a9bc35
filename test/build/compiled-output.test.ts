import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import tls from 'node:tls';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { useTestDatabase } from '@mailrail/testing/databases';
import { testRedisPrefix } from '@mailrail/testing/redis';
import { buildAll, entries } from '../../scripts/build';
import { portIn, withListening } from '@mailrail/testing/spawn-listening';

// `npm run build` output, run the way `npm run start:api` / `start:worker` and the Docker image
// run it: plain node on dist/, no tsx. Built into .cache/ (inside the repository, so node finds
// node_modules as it does from dist/).

const root = path.resolve(__dirname, '../..');
const out = path.join(root, '.cache', `build-test-${randomBytes(4).toString('hex')}`);
const database = useTestDatabase();

async function waitForOk(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fetch(url).catch(() => null))?.ok) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A compiled entry, run as production runs it, on ports it picks itself and reports in its `message` log line. */
const compiled = (entry: string, env: Record<string, string>, message: string) => ({
  command: process.execPath,
  args: [path.join(out, `${entry}.js`)],
  cwd: root,
  // NODE_OPTIONS cleared: jest's environment must not slip a loader in.
  env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: database.url, LOG_LEVEL: 'warn', SECRET: 'x'.repeat(40), ...env },
  message,
});

beforeAll(() => buildAll(out));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/**
 * Package names the compiled output loads at run time (require, import(), require.resolve, and
 * loadOnFirstUse, which requires a library by name when its first user calls it).
 */
function runtimePackages(): Map<string, string[]> {
  const builtins = new Set(builtinModules);
  const byEntry = new Map<string, string[]>();
  for (const entry of Object.keys(entries)) {
    const code = readFileSync(path.join(out, `${entry}.js`), 'utf8');
    const specifiers = [...code.matchAll(/\b(?:require(?:\.resolve)?|import|loadOnFirstUse)\("([^"]+)"\)/g)].map((m) => m[1]);
    const packages = specifiers
      .filter((s) => !s.startsWith('node:') && !builtins.has(s) && !s.startsWith('.'))
      .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
    byEntry.set(entry, [...new Set(packages)].sort());
  }
  return byEntry;
}

it('requires at run time only node built-ins and production dependencies, never our TypeScript or tsx', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const [entry, packages] of runtimePackages()) {
    expect(packages.length).toBeGreaterThan(0);
    expect({ entry, notProduction: packages.filter((p) => !(p in pkg.dependencies)) }).toEqual({ entry, notProduction: [] });
  }
});

it('dependencies hold exactly what the compiled output loads: dev-only packages are devDependencies', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const used = new Set([...runtimePackages().values()].flat());
  expect(Object.keys(pkg.dependencies).filter((d) => !used.has(d))).toEqual([]);
});

it("keeps every class's own name (esbuild suffixes a name two modules share; logs show class names)", () => {
  // `class Foo` and `var Foo = class` (how esbuild emits some classes: the name comes from the variable).
  const declared = (code: string) =>
    new Set(
      [...code.matchAll(/\bclass\s+(?!extends\b)([A-Za-z_$][\w$]*)|\bvar\s+([A-Za-z_$][\w$]*)\s*=\s*class\b/g)].map((m) => m[1] ?? m[2]),
    );
  const sources = spawnSync('git', ['ls-files', '-z', 'apps/*/src/*.ts', 'packages/*/src/*.ts'], { cwd: root, encoding: 'utf8' })
    .stdout.split('\0')
    .filter((f) => f && !f.includes('/web/'));
  const inSources = declared(sources.map((f) => readFileSync(path.join(root, f), 'utf8')).join('\n'));
  for (const entry of Object.keys(entries)) {
    const built = declared(readFileSync(path.join(out, `${entry}.js`), 'utf8'));
    // Each process's bundle has classes of its own (a scan finding none would prove nothing); a
    // thread's entry (the preview renderer) may have none.
    if (entry.endsWith('/main')) expect(built.size).toBeGreaterThan(0);
    expect({ entry, renamed: [...built].filter((name) => !inSources.has(name)) }).toEqual({ entry, renamed: [] });
  }
});

it('is deterministic: a second build gives the same bytes', async () => {
  const again = `${out}-again`;
  try {
    await buildAll(again);
    const files = readdirSync(out, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    expect(files.length).toBe(Object.keys(entries).length * 2); // each entry and its source map
    for (const f of files) {
      const rel = path.relative(out, path.join(f.parentPath, f.name));
      expect(readFileSync(path.join(again, rel)).equals(readFileSync(path.join(out, rel)))).toBe(true);
    }
  } finally {
    rmSync(again, { recursive: true, force: true });
  }
});

it('compiled API answers /health, /ready and a database query (Prisma WebAssembly found), and stops on SIGTERM', async () => {
  const team = await createTeam(database.db, 'compiled');
  const { apiKey } = await createApiKey(database.db, { teamId: team.id });
  const command = compiled(
    'api/main',
    { PORT: '0', HOST: '127.0.0.1', REDIS_PREFIX: testRedisPrefix(), API_RATE_LIMIT: '0' },
    'mailrail API listening',
  );
  await withListening(command, async (api) => {
    const base = `http://127.0.0.1:${portIn(api.listening, 'port')}`;
    await waitForOk(`${base}/health`);
    // Readiness is polled, as an orchestrator does: the first PostgreSQL connection of a cold
    // process can outlast the probe's own timeout on a loaded machine.
    await waitForOk(`${base}/ready`);
    expect(await (await fetch(`${base}/ready`)).json()).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok' });
    const emails = await fetch(`${base}/api/v1/emails`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(emails.status).toBe(200);
    expect(await emails.json()).toEqual({ data: [], count: 0 });
    // swagger-ui-dist is located at run time with require.resolve. (The body is read: an unread
    // response keeps its connection busy and would hold the graceful stop.)
    const css = await fetch(`${base}/api/v1/ui/assets/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect((await css.text()).length).toBeGreaterThan(1000);
    expect(await api.stop('SIGTERM')).toBe(0);
  });
});

it('compiled worker starts, serves /metrics and stops on SIGTERM', async () => {
  const command = compiled(
    'worker/main',
    {
      WORKER_METRICS_PORT: 'any',
      REDIS_PREFIX: testRedisPrefix(),
      SES_ENDPOINT: 'http://127.0.0.1:9', // never called: nothing is queued
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
    },
    'mailrail worker started',
  );
  await withListening(command, async (worker) => {
    const metricsUrl = `http://127.0.0.1:${portIn(worker.listening, 'metricsPort')}/metrics`;
    await waitForOk(metricsUrl);
    expect(await (await fetch(metricsUrl)).text()).toContain('process="worker"');
    expect(await worker.stop('SIGTERM')).toBe(0);
  });
});

it('compiled SMTP relay greets over implicit TLS (its development certificate made by selfsigned), serves /metrics and stops on SIGTERM', async () => {
  const command = compiled(
    'smtp/main',
    { SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', SMTPS_PORT: 'any', SMTP_METRICS_PORT: 'any', REDIS_PREFIX: testRedisPrefix() },
    'mailrail SMTP relay listening',
  );
  await withListening(command, async (smtp) => {
    const metricsUrl = `http://127.0.0.1:${portIn(smtp.listening, 'metricsPort')}/metrics`;
    await waitForOk(metricsUrl);
    const greeting = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port: portIn(smtp.listening, 'ports.tls'), rejectUnauthorized: false },
        () => undefined,
      );
      socket.once('data', (d) => (resolve(d.toString()), socket.destroy()));
      socket.once('error', reject);
    });
    expect(greeting).toMatch(/^220 .* ESMTP mailrail/);
    expect(await (await fetch(metricsUrl)).text()).toContain('process="smtp"');
    expect(await smtp.stop('SIGTERM')).toBe(0);
  });
});

it('compiled admin CLI creates a team', () => {
  const res = spawnSync(process.execPath, [path.join(out, 'cli/main.js'), 'team', 'create', '--name', 'from the compiled CLI'], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: database.url, LOG_LEVEL: 'warn', SECRET: 'x'.repeat(40) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(res.stderr).toBe('');
  expect(res.status).toBe(0);
  expect(JSON.parse(res.stdout)).toMatchObject({ teamId: expect.any(Number), apiKey: expect.stringMatching(/^us_/) });
});
