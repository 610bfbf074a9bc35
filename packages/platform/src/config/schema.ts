import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { isValidTimeZone } from '../clock';
import { trimTrailing } from '../text/trim';
import { defaultWebhookRetrySchedule, parseRetrySchedule } from './webhook-retry-schedule';

// Every setting of the processes (API, worker, SMTP relay), read from the environment. The README's configuration table
// is generated from these descriptions (npm run docs:config), so describe each one here.
const int = (def: number) => z.coerce.number().int().min(0).default(def);
const bool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(def ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');
const cron = (def: string) =>
  z
    .string()
    .default(def)
    .superRefine((expr, ctx) => {
      try {
        CronExpressionParser.parse(expr, { tz: 'UTC' });
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `not a valid cron expression: ${(err as Error).message}` });
      }
    });
// A listener that 0 turns off. `any` binds a port the OS picks and reports it in the process's
// "listening" log line: how a test starts a child without racing other processes for a port.
const listenerPort = (def: number) => z.union([z.literal('any'), z.coerce.number().int().min(0).max(65535)]).default(def);

/** The port to hand to listen() for a listenerPort setting: null = off, 0 = one the OS picks. */
export const listenPortOf = (setting: number | 'any'): number | null => (setting === 'any' ? 0 : setting || null);

/** The development default of SECRET: refused on any server reachable from elsewhere (load.ts). */
export const DEV_SECRET = 'dev-secret-change-me-dev-secret-change-me';

const optionalUrl = z
  .string()
  .url()
  .optional()
  .or(z.literal('').transform(() => undefined));

/** BODY_LIMIT's form: whole kilobytes or megabytes, in the units body-parser reads (powers of 1024). */
export const BODY_LIMIT_PATTERN = /^\d+(kb|mb)$/i;

/** host:port, comma-separated (IPv6 in brackets: [::1]:7000); empty or unset = not this mode. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;
const hostPortList = z
  .string()
  .max(4000)
  .optional()
  .transform((v, ctx) => {
    const items = (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const nodes: { host: string; port: number }[] = [];
    for (const item of items) {
      const m = HOST_PORT.exec(item);
      const port = m ? Number(m[2]) : 0;
      if (!m || port < 1 || port > 65535) {
        ctx.addIssue({ code: 'custom', message: `"${item}" is not host:port` });
        return z.NEVER;
      }
      nodes.push({ host: m[1].replace(/^\[(.*)\]$/, '$1'), port });
    }
    return nodes.length ? nodes : undefined;
  });

export const configSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'test', 'production'])
    .default('development')
    .describe('development, test or production; production refuses a weak SECRET'),
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(3000)
    .describe('HTTP port of the API (0 = one the OS picks, reported in the "mailrail API listening" log line)'),
  HOST: z.string().default('0.0.0.0').describe('Address the API listens on'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// URL')
    .default('postgresql://postgres@127.0.0.1:5432/mailrail')
    .describe('PostgreSQL connection URL'),
  DATABASE_POOL_SIZE: int(10).describe('PostgreSQL connections per process'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379')
    .describe('Redis connection URL of one Redis (the mode used unless REDIS_CLUSTER_NODES or REDIS_SENTINELS is set)'),
  REDIS_CLUSTER_NODES: hostPortList.describe(
    'Redis Cluster: comma-separated host:port of some of its nodes (the rest are discovered); instead of REDIS_URL and REDIS_SENTINELS (docs/redis.md)',
  ),
  REDIS_SENTINELS: hostPortList.describe(
    'Redis Sentinel: comma-separated host:port of the sentinels, with REDIS_SENTINEL_NAME; instead of REDIS_URL and REDIS_CLUSTER_NODES (docs/redis.md)',
  ),
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'must be a sentinel master name (letters, digits, _ . -)')
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe('Name of the master the sentinels watch (with REDIS_SENTINELS)'),
  REDIS_USERNAME: z
    .string()
    .max(256)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe('ACL user of the Redis nodes with REDIS_CLUSTER_NODES or REDIS_SENTINELS (REDIS_URL carries its own)'),
  REDIS_PASSWORD: z
    .string()
    .max(1024)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe('Password of the Redis nodes with REDIS_CLUSTER_NODES or REDIS_SENTINELS (REDIS_URL carries its own)'),
  REDIS_HASH_TAGS: z
    .enum(['auto', 'true', 'false'])
    .default('auto')
    .describe(
      'Put each queue (and each multi-key record) under its own {hash tag} so a Redis Cluster spreads queues over masters: auto = only with REDIS_CLUSTER_NODES; true also for a proxy or DragonflyDB; changes key names (docs/redis.md)',
    ),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only (hash tags are added by mailrail, see REDIS_HASH_TAGS)')
    .default('mailrail')
    .describe('Prefix of every Redis key and BullMQ queue (lets several installations share one Redis)'),
  PUBLIC_URL: z
    .string()
    .url()
    .default('http://localhost:3000')
    .transform((u) => trimTrailing(u, '/'))
    .describe('Public base URL of the API, used in unsubscribe and confirmation links'),
  SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .default(DEV_SECRET)
    .describe(
      'Server secret: hashes API keys, signs links, encrypts DKIM keys and webhook secrets. At least 32 random characters (openssl rand -hex 32); the default and other weak values are refused unless PUBLIC_URL is a loopback address',
    ),
  AWS_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as us-east-1')
    .default('us-east-1')
    .describe('Default SES region'),
  SES_REGIONS: z.string().optional().describe('Comma-separated SES regions domains may use (default: AWS_REGION)'),
  SES_ENDPOINT: optionalUrl.describe('SES-compatible endpoint used instead of AWS (the local emulator in development)'),
  SES_IDENTITY_ADAPTER: z
    .enum(['auto', 'ses', 'local'])
    .default('auto')
    .describe(
      'Where domain identities live: ses (AWS), local (database, for development), auto (local when SES_ENDPOINT is set or no AWS credentials are in the environment, else ses)',
    ),
  SES_RATE_LIMIT: int(0).describe(
    'Recipients per second per SES region across all workers and both lanes; 0 = read from SES GetAccount, else 14',
  ),
  SES_MARKETING_SHARE: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe('Share of the SES rate campaign mail may use while transactional mail waits (otherwise either lane may use the whole rate)'),
  SES_CONFIGURATION_SET_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe(
      'Prefix of the SES configuration sets <prefix>-general, -click, -open and -full chosen per domain tracking flags (none when unset)',
    ),
  SES_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(10_000)
    .describe('Timeout of one SES call; must stay well below SEND_LEASE_SECONDS'),
  SES_THROTTLE_PAUSE_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(1000)
    .describe('How long a region lane pauses after SES answers ThrottlingException / TooManyRequestsException'),
  SEND_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .describe('SES calls in flight per send queue (region and lane) per worker process'),
  SEND_LEASE_SECONDS: z.coerce
    .number()
    .int()
    .min(5)
    .default(60)
    .describe('How long a claimed email belongs to one worker before another may take it over'),
  WORKER_SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(25_000)
    .describe(
      'On SIGTERM the worker lets the sends in flight finish for at most this long, then exits 1 as a crash would (nothing is lost: leases end and the sweeper takes over)',
    ),
  SES_IN_DOUBT_WAIT_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(300)
    .describe(
      "An email whose worker died during its SES call is in doubt: with the wait policy it is sent again only if SES's Send event for it has not arrived this many seconds after its lease ended",
    ),
  SES_IN_DOUBT_CAMPAIGN: z
    .enum(['wait', 'resend'])
    .default('wait')
    .describe(
      'Campaign mail in doubt: wait = send again only when no Send event came within SES_IN_DOUBT_WAIT_SECONDS (no duplicate when the event comes; a delay when SES never had it); resend = send again when the lease ends (a duplicate when SES had it)',
    ),
  SES_IN_DOUBT_TRANSACTIONAL: z
    .enum(['wait', 'resend'])
    .default('resend')
    .describe('Transactional mail in doubt: resend (at least once, may duplicate) or wait, as SES_IN_DOUBT_CAMPAIGN'),
  SEND_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .default(10)
    .describe('SES attempts per email for transient errors (5xx, network, timeouts) before it is FAILED'),
  SEND_RETRY_BASE_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(10_000)
    .describe('First retry delay; doubles per attempt with +-20% jitter (defaults span about an hour)'),
  SEND_RETRY_MAX_MS: z.coerce.number().int().min(10).default(900_000).describe('Largest retry delay'),
  SEND_SWEEP_CRON: z
    .string()
    .default('*/30 * * * * *')
    .describe('Cron (with optional seconds field) of the sweeper that re-enqueues due, unsent emails with no live job and expired leases'),
  SEND_SWEEP_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .default(2000)
    .describe('Most emails the sweeper looks at per run; a larger backlog is looked at a page per run, oldest first'),
  SEND_SWEEP_LOOKAHEAD_SECONDS: int(300).describe(
    'The sweeper also re-creates delayed jobs for scheduled emails due within this many seconds, so they leave on time after Redis lost its jobs',
  ),
  SES_EVENT_SIMULATOR: z
    .enum(['auto', 'on', 'off'])
    .default('auto')
    .describe(
      'SES events made up for each message the local SES emulator accepts, with test addresses that bounce or complain (docs/events.md); auto = on in development when SES_ENDPOINT is loopback; on is refused in production and without a loopback SES_ENDPOINT',
    ),
  SES_EVENT_SIMULATOR_DELAY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(2000)
    .describe(
      'Simulated events: delay of Delivery, Bounce and DeliveryDelay after Send; a Complaint follows its Delivery after as long again',
    ),
  SES_LOCAL_PORT: z.coerce.number().int().min(1).max(65535).default(8005).describe('Port of the local SES emulator that npm start runs'),
  SNS_TOPIC_ARNS: z
    .string()
    .max(10_000)
    .optional()
    .describe(
      'Comma-separated SNS topic ARNs accepted by POST /api/ses/notifications, besides the topics `ses setup` created (stored in the database); any other topic is refused with 403 and never confirmed',
    ),
  SNS_MAX_MESSAGE_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(3600)
    .describe(
      'SNS messages whose signed Timestamp is older than this (or more than 5 minutes in the future) are refused; must stay below SES_NOTIFICATION_RETENTION_DAYS so a replay is refused after its dedupe row is pruned',
    ),
  SES_NOTIFICATION_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7)
    .describe('Days an SNS message id is kept to drop redeliveries (SNS retries within hours); older ones are pruned hourly'),
  COUNTER_FOLD_EVERY_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(1000)
    .describe(
      'How often the counter deltas of SES events are added to the daily, all-time and campaign counters (once per tick across all workers); reads add the deltas not folded yet',
    ),
  COUNTER_FOLD_BATCH_SIZE: z.coerce.number().int().min(1).default(20000).describe('Counter deltas added up per fold statement'),
  EMAIL_LIST_COUNT_CAP: z.coerce
    .number()
    .int()
    .min(1)
    .default(10000)
    .describe('GET /api/v1/emails counts matching emails up to this many; past it `count` is this cap and `countCapped` is true'),
  API_RATE_LIMIT: int(10).describe('Default requests per second per team (0 = off); a team can have its own'),
  API_RATE_LIMIT_MAX: int(100).describe(
    "Highest requests per second a team's own rate limit may be (its admins cannot set more, or 0 = unlimited; a stored value above it counts as it); 0 = no ceiling",
  ),
  API_KEY_CACHE_SECONDS: int(10).describe('How long a verified API key is trusted without reading the database'),
  API_KEY_NEGATIVE_CACHE_SECONDS: int(30).describe(
    'How long an unknown API key id is answered 403 without reading the database (at most 10,000 ids per process; 0 = off)',
  ),
  AUTH_FAILURES_PER_MINUTE: int(30).describe(
    'Failed API key authentications per client IP per minute (counted in Redis across replicas); beyond it the IP gets 429 before any database lookup (0 = off)',
  ),
  TRUST_PROXY: z
    .string()
    .max(1000)
    .regex(/^[\w.:/, -]*$/, 'a hop count, or comma-separated addresses, subnets or loopback/linklocal/uniquelocal')
    .default('')
    .describe(
      "Proxies whose X-Forwarded-For is believed (express 'trust proxy'): a hop count such as 1, or addresses/subnets/loopback; empty = none, the socket address is the client (per-IP limits then count the proxy)",
    ),
  BODY_LIMIT: z
    .string()
    .regex(BODY_LIMIT_PATTERN)
    .default('55mb')
    .describe('Largest accepted request body (attachments travel base64 in JSON)'),
  EMAIL_MAX_MESSAGE_MB: z.coerce
    .number()
    .positive()
    .default(40)
    .describe('Largest email (body and base64 attachments) accepted by the send API, in MB; SES v2 allows 40'),
  EMAIL_COMMIT_MAX_BATCH: int(500).describe('Group commit: most emails written by one multi-row INSERT when concurrent sends are combined'),
  EMAIL_COMMIT_CONCURRENCY: int(6).describe(
    'Group commit: INSERT statements in flight at once, each on a connection of the committer (beside DATABASE_POOL_SIZE); sends arriving meanwhile wait and share the next one',
  ),
  SMTP_HOST: z.string().default('0.0.0.0').describe('Address the SMTP relay listens on'),
  SMTP_PORT: listenerPort(2587).describe(
    'SMTP relay port with STARTTLS (0 = off; any = one the OS picks, reported in the "listening" log line); AUTH is only offered after STARTTLS',
  ),
  SMTPS_PORT: listenerPort(2465).describe(
    'SMTP relay port with implicit TLS (0 = off; any = one the OS picks, reported in the "listening" log line)',
  ),
  SMTP_TLS_CERT: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe(
      'PEM certificate (with its chain) file of the SMTP relay, read again on SIGHUP; required in production unless SMTP_TLS_SELF_SIGNED',
    ),
  SMTP_TLS_KEY: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe('PEM private key file of SMTP_TLS_CERT, read again on SIGHUP'),
  SMTP_TLS_SELF_SIGNED: bool(false).describe(
    'Without SMTP_TLS_CERT, generate a self-signed certificate at start (always done in development; in production only with this set, for a trial: clients must then accept an unverified certificate)',
  ),
  SMTP_SERVER_NAME: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9.-]*$/)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe("Host name of the SMTP relay's greeting and of its generated certificate (default: the machine's host name)"),
  SMTP_ALLOW_INSECURE_AUTH: bool(false).describe('Development only: allow AUTH without TLS from loopback clients (refused in production)'),
  SMTP_MAX_CLIENTS: z.coerce
    .number()
    .int()
    .min(1)
    .default(1000)
    .describe('Concurrent SMTP connections per relay process; beyond it new ones get 421'),
  SMTP_MAX_CONNECTIONS_PER_IP: int(20).describe(
    'Concurrent SMTP connections per client address (an IPv6 client counts per /64) per relay process; beyond it new ones get 421 at connect (0 = off, for a balancer that hides client addresses)',
  ),
  SMTP_AUTH_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(30_000)
    .describe('An SMTP connection that has not authenticated this long after connecting gets 421 and is closed'),
  SMTP_MAX_SESSION_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(600_000)
    .describe('Longest SMTP session: then 421 and close, at once when idle, else after the reply to the message in flight'),
  SMTP_DATA_BUDGET_MB: z.coerce
    .number()
    .positive()
    .default(256)
    .describe(
      'Bytes of SMTP messages held in memory at once per relay process (received and not yet answered); a message that would pass it gets 452 4.3.1 (at MAIL FROM when its SIZE says so)',
    ),
  SMTP_DATA_TEAM_BUDGET_MB: z.coerce
    .number()
    .positive()
    .default(64)
    .describe(
      "One team's share of SMTP_DATA_BUDGET_MB (at least EMAIL_MAX_MESSAGE_MB), so that one team cannot take the whole budget; past it 452 4.3.1",
    ),
  SMTP_DATA_CONCURRENCY_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(32)
    .describe('Messages of one team in flight at once (DATA to its reply) per relay process; past it 452 4.3.1'),
  SMTP_SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(20_000)
    .describe(
      'On SIGTERM the relay takes no new connections and answers 421 to new commands; sessions in the middle of a message have this long to finish',
    ),
  SMTP_DEDUPE_MESSAGE_ID: bool(true).describe(
    "A message resubmitted over SMTP with the same Message-ID, recipients and content within 24 h is answered with the first email's id instead of being stored again",
  ),
  SMTP_METRICS_PORT: listenerPort(9465).describe("Port of the SMTP relay's GET /metrics (0 = off; any = one the OS picks, logged)"),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level'),
  CAMPAIGN_TIMEZONE: z
    .string()
    .default('UTC')
    .refine(isValidTimeZone, 'must be an IANA time zone such as Europe/Paris')
    .describe('IANA time zone for natural-language campaign schedules'),
  CAMPAIGN_PREVIEW_MAX_MB: z.coerce
    .number()
    .positive()
    .max(40)
    .default(2)
    .describe('Largest campaign body (HTML or editor JSON) the preview and test send render; a larger one answers 413 before rendering'),
  CAMPAIGN_SCAN_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(1000)
    .describe('How often the worker starts due campaigns, records finished recipients and queues the next campaign window'),
  CAMPAIGN_CHUNK_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(10000)
    .default(2000)
    .describe('Recipients turned into emails per campaign transaction (a pause waits for at most one)'),
  AUTOMATION_TICK_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(1000)
    .describe('How often the worker enrolls contacts from new events and runs the automation steps that are due (docs/automations.md)'),
  AUTOMATION_TEAM_BUDGET: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(5000)
    .describe(
      "Automation runs one tick advances at most per team: runs are taken in order of their rank within their team, so another team's first due runs come before a burst's later ones",
    ),
  AUTOMATION_TICK_BUDGET: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10000)
    .describe('Automation runs one tick advances at most across all teams (the next tick goes on)'),
  AUTOMATION_ENROLL_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(5000)
    .describe(
      "New events (or a watched book's new contacts) one tick reads per team and turns into runs in one statement: a burst of a million events enrolls in 200 ticks",
    ),
  AUTOMATION_STEP_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(4)
    .describe('Lanes of automation runs one tick advances side by side, each with its own transaction (keep below DATABASE_POOL_SIZE)'),
  AUTOMATION_STEP_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .describe(
      'Automation runs whose due steps one transaction runs together (a lock, the contacts and suppressions, the log and the runs in one statement each); a step that fails rolls back its batch, whose runs are then run one by one',
    ),
  PERIODIC_MAX_BATCHES_PER_RUN: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .describe(
      'Batches one run of a draining periodic job (counter folds, webhook dispatch) does at most; the next run goes on, so the maintenance worker never waits behind one backlog',
    ),
  CAMPAIGN_PREPARATION_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(5000)
    .describe("Contacts of the book (by id) whose recipient rows one statement of a campaign's preparation decides"),
  CAMPAIGN_PREPARATION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(600_000)
    .default(30_000)
    .describe(
      "Longest one batch of a campaign's recipient preparation may run (its segment filter included); past it the batch is retried",
    ),
  CAMPAIGN_PREPARATION_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(20)
    .default(3)
    .describe(
      "Tries of a campaign's recipient preparation (each resumes after the last committed batch) before the campaign is paused with the reason",
    ),
  CONTACT_IMPORT_MAX_OPEN_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(10)
    .describe('CSV imports one team may have uploading, queued or running at once; one more upload answers 429'),
  CONTACT_IMPORT_MAX_STORED_MB_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024)
    .describe("Megabytes of uploaded CSV one team's unfinished imports may keep stored at once; an upload past it answers 429"),
  CONTACT_IMPORT_YIELD_EVERY_BATCHES: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .describe(
      'An import that has committed this many batches in one run steps back behind the imports waiting for a place (and resumes from its checkpoint)',
    ),
  CONTACT_IMPORT_MAX_MB: z.coerce
    .number()
    .positive()
    .max(4096)
    .default(256)
    .describe('Largest CSV file accepted by a contact import, in MB (1,000,000 rows of a realistic CSV take about 100 MB)'),
  CONTACT_IMPORT_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(20000)
    .default(5000)
    .describe('Rows written per statement (and per committed checkpoint) by a contact import'),
  CONTACT_IMPORT_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(20)
    .default(5)
    .describe('Tries of a contact import job (a retry resumes after the last committed batch) before the import is marked failed'),
  SEGMENT_QUERY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(600_000)
    .default(10_000)
    .describe(
      'Longest one statement that evaluates a segment filter may run in the API (preview, counts, pages, export, the check when a campaign is scheduled); past it the request answers 503 SERVICE_UNAVAILABLE',
    ),
  SEGMENT_PREVIEW_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(600_000)
    .default(2_000)
    .describe(
      "Longest one statement of the segment builder's live preview may run (shorter than SEGMENT_QUERY_TIMEOUT_MS: a preview is asked at every edit); past it the preview answers 503",
    ),
  EXPORT_IDLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(3_600_000)
    .default(60_000)
    .describe(
      'A contact export whose client takes nothing of the last batch written for this long is cut off (its connection closed, its EXPORT_CONCURRENCY place freed)',
    ),
  // Heavy operations: per-team and global concurrency, one pool (packages/platform/src/budgets/heavy-work.ts).
  HEAVY_DB_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .default(3)
    .describe(
      'PostgreSQL connections per process for heavy operations (exports, segment evaluation, campaign preparation), apart from DATABASE_POOL_SIZE',
    ),
  HEAVY_DB_WAIT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(5000)
    .describe('Longest a heavy operation waits for one of the HEAVY_DB_POOL_SIZE connections; past it the request answers 503'),
  EXPORT_CONCURRENCY_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(2)
    .describe('Contact exports one team may run at once (all replicas); one more answers 429'),
  EXPORT_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .default(6)
    .describe('Contact exports all teams together may run at once; one more answers 503'),
  SEGMENT_CONCURRENCY_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(2)
    .describe('Segment evaluations (preview, count, contact page) one team may run at once; one more answers 429'),
  SEGMENT_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .default(6)
    .describe('Segment evaluations all teams together may run at once; one more answers 503'),
  CAMPAIGN_PREPARATION_CONCURRENCY_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(1)
    .describe("Campaigns of one team whose recipients are prepared at once; the team's others wait their turn"),
  CAMPAIGN_PREPARATION_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .default(2)
    .describe('Campaigns whose recipients are prepared at once, all teams together'),
  CONTACT_IMPORT_CONCURRENCY_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(1)
    .describe("CSV imports of one team that run at once; the team's others wait their turn"),
  CONTACT_IMPORT_CONCURRENCY: z.coerce.number().int().min(1).default(2).describe('CSV imports that run at once, all teams together'),
  PREVIEW_CONCURRENCY_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .default(2)
    .describe('Campaign previews and test sends one team may render at once (all replicas); one more answers 429'),
  PREVIEW_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .default(8)
    .describe('Campaign previews and test sends all teams together may render at once; one more answers 503'),
  PREVIEW_RENDER_THREADS: z.coerce
    .number()
    .int()
    .min(0)
    .default(1)
    .describe(
      'Threads per API process that render campaign previews and test sends off the event loop (0 = on it); renders beyond them wait',
    ),
  DKIM_SELECTOR: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default('mailrail')
    .describe('DKIM selector of new domains (a domain keeps the selector it was added with)'),
  DNS_RESOLVER: z.string().optional().describe('host:port of the DNS server used for domain checks (default: the system resolver)'),
  DNS_TIMEOUT_MS: z.coerce.number().int().min(100).default(3000).describe('Timeout of one DNS query of a domain check (two tries)'),
  DOMAIN_CHECK_CRON: cron('0 */4 * * *').describe(
    'Cron (UTC) of the domain verification sweep, and how often a domain that is not verified yet is checked again',
  ),
  DOMAIN_RECHECK_CRON: cron('30 3 * * *').describe('Cron (UTC) at which verified domains are checked again'),
  WEBHOOK_ALLOW_PRIVATE: bool(false).describe('Allow webhook URLs on private and loopback addresses'),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .max(500)
    .default(defaultWebhookRetrySchedule)
    .superRefine((text, ctx) => {
      try {
        parseRetrySchedule(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .describe('Waits between the attempts of a webhook delivery, e.g. 5s,1m,2h (one attempt more than waits)'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000).describe('Timeout of one webhook call'),
  WEBHOOK_AUTO_DISABLE_AFTER: z.coerce
    .number()
    .int()
    .min(1)
    .default(30)
    .describe('Consecutive failed calls after which a webhook is AUTO_DISABLED'),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).default(25).describe('Webhook calls in flight per worker process'),
  WEBHOOK_DISPATCH_EVERY_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(1000)
    .describe('How often the webhook outbox is turned into deliveries (once per tick across all workers)'),
  WEBHOOK_DISPATCH_BATCH_SIZE: z.coerce.number().int().min(1).default(500).describe('Outbox events turned into deliveries per transaction'),
  WEBHOOK_REQUEUE_EVERY_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(60_000)
    .describe('How often deliveries whose job was lost are queued again'),
  WEBHOOK_REQUEUE_PENDING_AFTER_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(60_000)
    .describe('A PENDING delivery this long past its time is queued again'),
  WEBHOOK_REQUEUE_IN_PROGRESS_AFTER_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(600_000)
    .describe('An IN_PROGRESS delivery untouched this long (its worker died) is queued again'),
  WEBHOOK_REQUEUE_BATCH: z.coerce.number().int().min(1).default(1000).describe('Most stalled deliveries queued again per run'),
  WEBHOOK_PRUNE_EVERY_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(3_600_000)
    .describe('How often dispatched webhook events past WEBHOOK_RETENTION_DAYS are deleted'),
  WEBHOOK_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .default(30)
    .describe('Days dispatched webhook events and their delivery log are kept'),
  EMAIL_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      'Days emails and their events are kept: older days of the email log are dropped whole, one partition a day (0 = kept forever; docs/email-log.md)',
    ),
  EMAIL_BODY_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('Days after which html, text, attachments, raw message and headers of sent emails are cleared (0 = kept)'),
  REQUEST_LOG_ENABLED: bool(true).describe(
    'Request log: false = API requests and SMTP transactions are not logged (GET /api/v1/logs lists what was logged before; docs/request-log.md)',
  ),
  REPUTATION_ALERT_MIN_SENT: z.coerce
    .number()
    .int()
    .min(1)
    .default(1000)
    .describe(
      "Reputation alerts (webhook and admin mail) wait until the 7-day window holds this many sent emails: below 1,000 a single complaint is already past SES's 0.1 % review mark, so the rate says nothing yet (docs/deliverability.md)",
    ),
  REQUEST_LOG_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .default(14)
    .describe(
      'Days the request log (API requests per team, GET /api/v1/logs; docs/request-log.md) is kept: older days are dropped whole, one partition a day',
    ),
  REQUEST_LOG_FLUSH_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(1000)
    .describe('Request log: how often buffered entries are written, one multi-row INSERT'),
  REQUEST_LOG_BUFFER: int(5000).describe(
    'Request log: most entries held in memory awaiting their write; beyond it entries are dropped and counted (mailrail_request_log_dropped_total)',
  ),
  EVENT_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .default(90)
    .describe(
      "Days custom events (POST /api/v1/events; docs/custom-events.md) and their event ids are kept; a caller's eventId sent again after that stores a new event",
    ),
  EMAIL_PARTITION_DAYS_AHEAD: z.coerce
    .number()
    .int()
    .min(1)
    .max(90)
    .default(7)
    .describe('Days of email log and request log partitions the worker keeps created ahead of today (UTC)'),
  WORKER_METRICS_PORT: listenerPort(9464).describe("Port of the worker's GET /metrics (0 = off; any = one the OS picks, logged)"),
  METRICS_TOKEN: z.string().optional().describe('Bearer token required by GET /metrics when set'),
  METRICS_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(2000)
    .describe('One render of GET /metrics (API, worker, SMTP relay) serves every scrape for this long; scrapes during a render share it'),
  ADMIN_TOKEN: z.string().optional().describe('Bearer token of the queue dashboard at /admin/queues (disabled when unset)'),
  DASHBOARD_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(5)
    .max(525_600)
    .default(4320)
    .describe('A dashboard session not used for this long ends (docs/dashboard.md)'),
  DASHBOARD_SESSION_MAX_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(365)
    .default(30)
    .describe('A dashboard session ends this long after sign-in, however much it is used'),
  DASHBOARD_LOGIN_FAILURES_PER_IP: int(20).describe(
    'Failed dashboard sign-ins per client IP per 15 minutes (counted in Redis across replicas); beyond it the IP gets 429 (0 = off)',
  ),
  DASHBOARD_LOGIN_FAILURES_PER_ACCOUNT: int(10).describe(
    'Failed dashboard sign-ins per email address per 15 minutes, whether or not the account exists; beyond it that address gets 429 (0 = off)',
  ),
  DASHBOARD_LINK_MINUTES: z.coerce
    .number()
    .int()
    .min(5)
    .max(10_080)
    .default(60)
    .describe('Validity of one-time sign-in links (admin CLI) and password-reset links'),
  DASHBOARD_INVITATION_DAYS: z.coerce.number().int().min(1).max(90).default(7).describe('Validity of team invitation links'),
  DASHBOARD_MAIL_FROM: z
    .string()
    .min(1)
    .max(320)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe(
      'Sender of dashboard mail (invitations, password resets, reputation alerts to team admins), e.g. "mailrail <dashboard@example.com>"; its domain must be a verified domain of DASHBOARD_MAIL_TEAM_ID. Unset: no such mail (invitations answer 503)',
    ),
  DASHBOARD_MAIL_TEAM_ID: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .or(z.literal('').transform(() => undefined))
    .describe(
      'Team whose domain sends dashboard mail through the normal pipeline (its limits and suppressions apply); a team of its own: one with members, active API keys or webhooks is refused',
    ),
  DASHBOARD_OPERATORS: z
    .string()
    .max(10_000)
    .optional()
    .describe(
      "Comma-separated dashboard accounts (email addresses) of the instance's operators: the people who run it and its admin CLI. They may create teams in the dashboard (docs/dashboard.md)",
    ),
  DASHBOARD_WEB_DIR: z
    .string()
    .max(1000)
    .default('apps/web/dist')
    .describe('Directory of the built dashboard app served at / (relative to the working directory)'),
});

/** Where Redis is, as REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS chose (load.ts picks exactly one). */
export type RedisTarget =
  | { mode: 'standalone'; url: string }
  | { mode: 'cluster'; nodes: { host: string; port: number }[]; username?: string; password?: string }
  | { mode: 'sentinel'; sentinels: { host: string; port: number }[]; name: string; username?: string; password?: string };

export type Config = z.infer<typeof configSchema> & {
  redis: RedisTarget;
  /** REDIS_HASH_TAGS resolved: queues and multi-key records each under one {hash tag} (docs/redis.md). */
  redisHashTags: boolean;
  sesRegions: string[];
  /** SES_EVENT_SIMULATOR resolved: true only against a loopback SES emulator, never in production. */
  sesEventSimulator: boolean;
};
