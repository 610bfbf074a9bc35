import { awsCredentialsSource } from './aws-credentials';
import ipaddr from 'ipaddr.js';
import { configSchema, DEV_SECRET, type Config, type RedisTarget } from './schema';

export class ConfigError extends Error {}

const MIN_SECRET_LENGTH = 32;
// Compared without case and punctuation: "Change-Me" is "changeme".
const WELL_KNOWN_SECRETS = [
  'secret',
  'changeme',
  'password',
  'mailrail',
  'usesend',
  'unsend',
  'devsecretchangeme',
  'supersecret',
  'default',
  'example',
  'test',
  'qwerty',
  '0123456789',
  'abcdefghijklmnopqrstuvwxyz',
];

/**
 * Why SECRET is unfit to sign links and encrypt keys on a reachable server, or null. Refused:
 * shorter than 32 characters, fewer than 8 distinct characters ("aaaa...", "abab..."), one
 * piece repeated ("dev-secret-change-me" twice), or made of well-known words only.
 */
export function weakSecretReason(secret: string): string | null {
  if (secret === DEV_SECRET) return 'is the development default';
  if (secret.length < MIN_SECRET_LENGTH) return `is shorter than ${MIN_SECRET_LENGTH} characters`;
  if (new Set(secret).size < 8) return 'has fewer than 8 distinct characters';
  // A string equal to a rotation of itself is one piece repeated (linear: one indexOf).
  if ((secret + secret).indexOf(secret, 1) < secret.length) return 'is one piece repeated';
  let rest = secret.toLowerCase().replace(/[^a-z0-9]/g, '');
  for (const word of WELL_KNOWN_SECRETS) rest = rest.split(word).join('');
  if (rest.length < 8) return 'is made of well-known words';
  return null;
}

/**
 * localhost (and *.localhost), 127.0.0.0/8 and ::1: a server only this machine can reach. Decides
 * both the SECRET guard and where the SES event simulator may run.
 */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(host)) return false;
  const addr = ipaddr.process(host);
  return addr.range() === 'loopback';
}

/** Reads and validates the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  // Anyone who knows SECRET forges unsubscribe and confirmation links and decrypts DKIM keys:
  // a server others can reach (PUBLIC_URL not loopback) or NODE_ENV=production needs a real one.
  const weak = weakSecretReason(c.SECRET);
  if (weak && (c.NODE_ENV === 'production' || !isLoopbackUrl(c.PUBLIC_URL))) {
    const why = c.NODE_ENV === 'production' ? 'NODE_ENV is production' : `PUBLIC_URL ${c.PUBLIC_URL} is not a loopback address`;
    throw new ConfigError(
      `Invalid configuration:\n  SECRET: ${weak}; ${why}, so SECRET must be at least ${MIN_SECRET_LENGTH} random characters, e.g. SECRET=$(openssl rand -hex 32)`,
    );
  }
  // A replayed SNS message is refused by its age; its dedupe row must outlive that window.
  if (c.SES_NOTIFICATION_RETENTION_DAYS * 86_400 <= c.SNS_MAX_MESSAGE_AGE_SECONDS) {
    throw new ConfigError('Invalid configuration:\n  SNS_MAX_MESSAGE_AGE_SECONDS: must be shorter than SES_NOTIFICATION_RETENTION_DAYS');
  }
  // AUTH sends the API key itself: over plain text only in development, and only on loopback (smtp).
  if (c.SMTP_ALLOW_INSECURE_AUTH && c.NODE_ENV === 'production') {
    throw new ConfigError(
      'Invalid configuration:\n  SMTP_ALLOW_INSECURE_AUTH: must not be true in production: AUTH would carry API keys in clear text',
    );
  }
  if (!c.SMTP_TLS_CERT !== !c.SMTP_TLS_KEY) {
    throw new ConfigError(
      `Invalid configuration:\n  ${c.SMTP_TLS_CERT ? 'SMTP_TLS_KEY' : 'SMTP_TLS_CERT'}: SMTP_TLS_CERT and SMTP_TLS_KEY are set together`,
    );
  }
  // Dashboard mail goes through the normal pipeline as one team's email: both or neither.
  if ((c.DASHBOARD_MAIL_FROM === undefined) !== (c.DASHBOARD_MAIL_TEAM_ID === undefined)) {
    throw new ConfigError(
      'Invalid configuration:\n  DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID: set both (the sender and the team whose verified domain sends it) or neither',
    );
  }
  const sesRegions = (c.SES_REGIONS ?? c.AWS_REGION)
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of sesRegions) {
    if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(r)) {
      throw new ConfigError(`Invalid configuration:\n  SES_REGIONS: "${r}" is not an AWS region`);
    }
  }
  if (!sesRegions.includes(c.AWS_REGION)) sesRegions.unshift(c.AWS_REGION);
  const redis = resolveRedisTarget(c, env);
  if (redis.mode === 'cluster' && c.REDIS_HASH_TAGS === 'false') {
    throw new ConfigError(
      'Invalid configuration:\n  REDIS_HASH_TAGS: must not be false with REDIS_CLUSTER_NODES: a cluster refuses scripts and queues whose keys span slots',
    );
  }
  const redisHashTags = c.REDIS_HASH_TAGS === 'auto' ? redis.mode === 'cluster' : c.REDIS_HASH_TAGS === 'true';
  return { ...c, sesRegions, sesEventSimulator: resolveSesEventSimulator(c, env), redis, redisHashTags };
}

/**
 * Exactly one way to reach Redis: REDIS_CLUSTER_NODES, REDIS_SENTINELS (with REDIS_SENTINEL_NAME),
 * or REDIS_URL (the default when neither is set). Two set at once is refused rather than guessed.
 */
function resolveRedisTarget(
  c: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME' | 'REDIS_USERNAME' | 'REDIS_PASSWORD'>,
  env: NodeJS.ProcessEnv,
): RedisTarget {
  const chosen = [
    env.REDIS_URL ? 'REDIS_URL' : undefined,
    c.REDIS_CLUSTER_NODES ? 'REDIS_CLUSTER_NODES' : undefined,
    c.REDIS_SENTINELS ? 'REDIS_SENTINELS' : undefined,
  ].filter((v) => v !== undefined);
  if (chosen.length > 1) {
    throw new ConfigError(
      `Invalid configuration:\n  ${chosen.join(', ')}: set only one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS`,
    );
  }
  if (c.REDIS_SENTINEL_NAME && !c.REDIS_SENTINELS) {
    throw new ConfigError('Invalid configuration:\n  REDIS_SENTINEL_NAME: only with REDIS_SENTINELS');
  }
  const auth = {
    ...(c.REDIS_USERNAME ? { username: c.REDIS_USERNAME } : {}),
    ...(c.REDIS_PASSWORD ? { password: c.REDIS_PASSWORD } : {}),
  };
  if (c.REDIS_CLUSTER_NODES) return { mode: 'cluster', nodes: c.REDIS_CLUSTER_NODES, ...auth };
  if (c.REDIS_SENTINELS) {
    if (!c.REDIS_SENTINEL_NAME) {
      throw new ConfigError(
        'Invalid configuration:\n  REDIS_SENTINEL_NAME: required with REDIS_SENTINELS (the master name the sentinels watch)',
      );
    }
    return { mode: 'sentinel', sentinels: c.REDIS_SENTINELS, name: c.REDIS_SENTINEL_NAME, ...auth };
  }
  if (c.REDIS_USERNAME || c.REDIS_PASSWORD) {
    throw new ConfigError(
      'Invalid configuration:\n  REDIS_USERNAME / REDIS_PASSWORD: only with REDIS_CLUSTER_NODES or REDIS_SENTINELS; put them in REDIS_URL (redis://user:password@host:6379)',
    );
  }
  return { mode: 'standalone', url: c.REDIS_URL };
}

/**
 * The SES event simulator makes up deliveries, bounces and complaints. It must never run beside
 * real SES, where it would contradict what SES reports: `on` is refused in production and
 * unless SES_ENDPOINT is a loopback emulator; `auto` is on only in development against one.
 */
function resolveSesEventSimulator(c: Pick<Config, 'SES_EVENT_SIMULATOR' | 'SES_ENDPOINT' | 'NODE_ENV'>, env: NodeJS.ProcessEnv): boolean {
  if (c.SES_EVENT_SIMULATOR === 'off') return false;
  const loopback = c.SES_ENDPOINT !== undefined && isLoopbackUrl(c.SES_ENDPOINT);
  if (c.SES_EVENT_SIMULATOR === 'auto') return c.NODE_ENV === 'development' && loopback;
  const refuse = (why: string) => new ConfigError(`Invalid configuration:\n  SES_EVENT_SIMULATOR: ${why}`);
  if (c.NODE_ENV === 'production') {
    throw refuse('must not be on in production: it makes up delivery events, bounces and complaints');
  }
  if (!c.SES_ENDPOINT) {
    const credentials = awsCredentialsSource(env, { file: true });
    throw refuse(
      `on needs SES_ENDPOINT set to the local SES emulator (for example http://127.0.0.1:8005): without it mail goes to real SES` +
        `${credentials ? ` (AWS credentials found in ${credentials})` : ''}, whose real events the simulated ones would contradict`,
    );
  }
  if (!loopback) {
    throw refuse(
      `on needs SES_ENDPOINT on a loopback address (localhost, 127.0.0.1, ::1), not ${new URL(c.SES_ENDPOINT).host}: the simulator never runs against a remote or real SES`,
    );
  }
  return true;
}

/** For process entry points: prints the problem and exits with status 1 instead of a stack trace. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
