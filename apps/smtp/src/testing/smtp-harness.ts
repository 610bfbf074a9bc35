import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { createApiKey, createTeam, type Permission } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import type { Config } from '@mailrail/platform/config/schema';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { generateDevCertificate, type DevCertificate } from '@mailrail/platform/tls/self-signed';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { closeSmtpDeps, createSmtpDeps, type SmtpDeps } from '../deps';
import { startSmtpRelay, type SmtpRelay } from '../relay';

export interface TestSmtpTeam {
  teamId: number;
  apiKey: string;
}

export interface TestRelay {
  config: Config;
  deps: SmtpDeps;
  relay: SmtpRelay;
  /** A direct connection to the test database (not through any proxy the relay may use). */
  db: Db;
  databaseUrl: string;
  certificate: DevCertificate;
  team: TestSmtpTeam;
  /** A verified domain of `team`. */
  domain: { id: number; name: string };
  newTeam(name?: string): Promise<TestSmtpTeam>;
  newKey(teamId: number, opts?: { permission?: Permission; domainId?: number }): Promise<string>;
  addDomain(teamId: number, name: string, opts?: { verified?: boolean }): Promise<{ id: number; name: string }>;
  /** Nodemailer's SMTP transport to the relay (or to `port`), verifying its certificate: STARTTLS (required) by default, implicit TLS with `secure`. */
  transport(opts?: {
    secure?: boolean;
    user?: string;
    pass?: string | null;
    authMethod?: 'PLAIN' | 'LOGIN';
    pool?: boolean;
    maxConnections?: number;
    port?: number;
  }): Transporter<SMTPTransport.SentMessageInfo>;
  close(): Promise<void>;
}

// One certificate per test file: RSA key generation takes a second or two.
let certificate: Promise<DevCertificate> | undefined;

/**
 * A relay in this process on the test file's own database and Redis prefix, listening on free
 * ports, with one team, one verified domain and a FULL key. `route` may send the relay's
 * PostgreSQL and Redis connections through a proxy the test controls (tcp-proxy.ts).
 */
export async function startTestRelay(
  env: Record<string, string> = {},
  opts: { route?: { database?: (url: string) => string; redis?: (url: string) => string } } = {},
): Promise<TestRelay> {
  certificate ??= generateDevCertificate('localhost');
  const cert = await certificate;
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const direct = testConfig(databaseUrl, prefix, env);
  const config = testConfig(databaseUrl, prefix, {
    DATABASE_URL: opts.route?.database?.(databaseUrl) ?? databaseUrl,
    // Only a routed Redis names a URL: without one the relay reaches the test's Redis (a cluster
    // on a cluster run). A TCP proxy fronts one server only, so a routed relay uses the local one.
    ...(opts.route?.redis ? { REDIS_URL: opts.route.redis(direct.REDIS_URL) } : {}),
    ...env,
  });
  const db = createDb(databaseUrl, 2);
  const deps = createSmtpDeps(config);
  const relay = await startSmtpRelay(deps, { host: '127.0.0.1', starttlsPort: 0, tlsPort: 0, tls: cert, serverName: 'localhost' });

  const newKey: TestRelay['newKey'] = async (teamId, o = {}) =>
    (await createApiKey(db, { teamId, permission: o.permission ?? 'FULL', domainId: o.domainId })).apiKey;
  const newTeam: TestRelay['newTeam'] = async (name = 'SMTP team') => {
    const t = await createTeam(db, name);
    return { teamId: t.id, apiKey: await newKey(t.id) };
  };
  const addDomain: TestRelay['addDomain'] = async (teamId, name, o = {}) => {
    const d = await insertDomain(db, config.SECRET, {
      teamId,
      name,
      region: config.AWS_REGION,
      dkimSelector: config.DKIM_SELECTOR,
      verified: o.verified ?? true,
    });
    return { id: d.id, name: d.name };
  };
  const team = await newTeam();
  const domain = await addDomain(team.teamId, 'relay.example.com');
  const transports: Transporter[] = [];

  return {
    config,
    deps,
    relay,
    db,
    databaseUrl,
    certificate: cert,
    team,
    domain,
    newTeam,
    newKey,
    addDomain,
    transport: (o = {}) => {
      const t = nodemailer.createTransport({
        host: '127.0.0.1',
        port: o.port ?? (o.secure ? relay.ports.tls! : relay.ports.starttls!),
        secure: !!o.secure,
        requireTLS: !o.secure,
        auth: o.pass === null ? undefined : { user: o.user ?? 'mailrail', pass: o.pass ?? team.apiKey },
        authMethod: o.authMethod,
        tls: { ca: [cert.cert] },
        pool: !!o.pool,
        maxConnections: o.maxConnections,
      } as SMTPTransport.Options);
      transports.push(t);
      return t;
    },
    close: async () => {
      for (const t of transports) t.close();
      await relay.stop(0);
      await deleteRedisPrefix(deps.redis, prefix).catch(() => undefined);
      await closeSmtpDeps(deps);
      await db.$disconnect();
      await dropDatabase(databaseUrl);
    },
  };
}
