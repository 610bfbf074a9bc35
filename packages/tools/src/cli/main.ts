// Admin CLI: `npm run cli -- <command>`. Prints JSON on stdout; bad arguments exit with 2.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '@mailrail/platform/config/load';
import type { Config } from '@mailrail/platform/config/schema';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { createRedis } from '@mailrail/platform/redis/client';
import { ApiPermission } from '@mailrail/platform/db/generated/enums';
import { apiKeyRevokedChannel, createApiKey, createTeam, isApiPermission, revokeApiKey } from '@mailrail/domain/teams/api-keys';
import { createDomain } from '@mailrail/domain/domains/add-domain';
import { domainView } from '@mailrail/domain/domains/domain-view';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { createIdentityPort } from '@mailrail/domain/ses-identity/choose-adapter';
import { awsSetupClients, sesSetupCommand } from '@mailrail/domain/ses-events/ses-setup';
import { rememberSnsTopic } from '@mailrail/domain/ses-events/sns-topics';
import {
  firstLink,
  simulatedEngagementEvent,
  simulatedMessageOfEmail,
  simulatedSesEventJob,
} from '@mailrail/domain/ses-events/event-simulator';
import { createQueueFactory, queueNames } from '@mailrail/platform/queue/queues';
import { normalisedEmailField } from '@mailrail/domain/emails/address';
import { TeamRole } from '@mailrail/platform/db/generated/enums';
import { dashboardLink } from '@mailrail/domain/users/link-tokens';
import { issueUserToken } from '@mailrail/domain/users/user-tokens';
import { ensureUserInTeam } from '@mailrail/domain/users/users';

class UsageError extends Error {}

const USAGE = `usage: npm run cli -- <command>
  team create --name NAME
  apikey create --team ID [--permission FULL|SENDING] [--domain ID] [--name NAME]
  apikey revoke --key KEY_OR_PREFIX
  domain add --team ID --name example.com [--region us-east-1] [--verified]
  user create --email E --team ID [--role ADMIN|MEMBER]   (dashboard user; prints a one-time sign-in link)
  ses setup --region R [--topic-name NAME] [--callback-url URL]
  simulate open --email ID              (development: the SES event simulator must be on)
  simulate click --email ID [--link URL]`;

function positiveInt(value: string | undefined, flag: string): number {
  if (value === undefined) throw new UsageError(`missing --${flag}`);
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}

function required(value: string | undefined, flag: string): string {
  if (!value || !value.trim()) throw new UsageError(`missing --${flag}`);
  return value.trim();
}

async function teamMustExist(db: Db, teamId: number) {
  if (!(await db.team.findUnique({ where: { id: teamId } }))) throw new UsageError(`team ${teamId} does not exist`);
}

type Command = (args: string[], ctx: { db: Db; config: Config }) => Promise<unknown>;

const commands: Record<string, Command> = {
  'team create': async (args, { db }) => {
    const { values } = parseArgs({ args, options: { name: { type: 'string' } }, strict: true });
    const team = await createTeam(db, required(values.name, 'name'));
    const { apiKey } = await createApiKey(db, { teamId: team.id, name: 'default', permission: 'FULL' });
    return { teamId: team.id, apiKey };
  },
  'apikey create': async (args, { db }) => {
    const { values } = parseArgs({
      args,
      options: { team: { type: 'string' }, permission: { type: 'string' }, domain: { type: 'string' }, name: { type: 'string' } },
      strict: true,
    });
    const teamId = positiveInt(values.team, 'team');
    const permission = (values.permission ?? 'FULL').toUpperCase();
    if (!isApiPermission(permission))
      throw new UsageError(`--permission must be ${Object.values(ApiPermission).join(' or ')}, got "${values.permission}"`);
    await teamMustExist(db, teamId);
    let domainId: number | undefined;
    if (values.domain !== undefined) {
      domainId = positiveInt(values.domain, 'domain');
      if (!(await db.domain.findFirst({ where: { id: domainId, teamId } })))
        throw new UsageError(`domain ${domainId} is not a domain of team ${teamId}`);
    }
    const { apiKey } = await createApiKey(db, { teamId, permission, domainId, name: values.name });
    return { apiKey };
  },
  'apikey revoke': async (args, { db, config }) => {
    const { values } = parseArgs({ args, options: { key: { type: 'string' } }, strict: true });
    const revoked = await revokeApiKey(db, required(values.key, 'key'));
    if (!revoked) throw new UsageError(`no active API key matches "${values.key}"`);
    // Tell every API replica to drop its cached copy now rather than at cache expiry.
    const redis = createRedis(config.redis);
    try {
      await redis.publish(apiKeyRevokedChannel(config.REDIS_PREFIX), revoked.clientId);
    } finally {
      redis.disconnect();
    }
    return { revoked: true, clientId: revoked.clientId };
  },
  'domain add': async (args, { db, config }) => {
    const { values } = parseArgs({
      args,
      options: { team: { type: 'string' }, name: { type: 'string' }, region: { type: 'string' }, verified: { type: 'boolean' } },
      strict: true,
    });
    const teamId = positiveInt(values.team, 'team');
    const name = required(values.name, 'name');
    await teamMustExist(db, teamId);
    try {
      // The same operation as POST /api/v1/domains: name and region checks, DKIM key, SES identity.
      const domain = await createDomain(
        { db, config, identities: createIdentityPort(config, { db }) },
        { teamId, name, region: values.region, verified: values.verified },
      );
      return domainView(domain);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) throw new UsageError(err.message);
      throw err;
    }
  },
  'user create': async (args, { db, config }) => {
    const { values } = parseArgs({
      args,
      options: { email: { type: 'string' }, team: { type: 'string' }, role: { type: 'string' } },
      strict: true,
    });
    const parsedEmail = normalisedEmailField().safeParse(required(values.email, 'email'));
    if (!parsedEmail.success) throw new UsageError(`--email must be an email address, got "${values.email}"`);
    const teamId = positiveInt(values.team, 'team');
    // The CLI bootstraps a team's first administrator; members usually arrive by invitation.
    const role = (values.role ?? 'ADMIN').toUpperCase();
    if (!(Object.values(TeamRole) as string[]).includes(role))
      throw new UsageError(`--role must be ${Object.values(TeamRole).join(' or ')}, got "${values.role}"`);
    await teamMustExist(db, teamId);
    const user = await ensureUserInTeam(db, { email: parsedEmail.data, teamId, role: role as TeamRole });
    const token = await issueUserToken(db, {
      userId: user.userId,
      purpose: 'SIGN_IN',
      ttlMs: config.DASHBOARD_LINK_MINUTES * 60_000,
      now: new Date(),
    });
    return {
      userId: user.userId,
      email: parsedEmail.data,
      teamId,
      role,
      created: user.created,
      signInLink: dashboardLink(config.PUBLIC_URL, 'sign-in/link', token),
      linkExpiresInMinutes: config.DASHBOARD_LINK_MINUTES,
    };
  },
  'ses setup': (args, { db, config }) => sesSetupCommand(args, config, awsSetupClients, (arn, region) => rememberSnsTopic(db, arn, region)),
  'simulate open': (args, ctx) => simulateEngagement('open', args, ctx),
  'simulate click': (args, ctx) => simulateEngagement('click', args, ctx),
};

/**
 * An Open or Click of an email the local setup sent, queued like an SNS notification so the one
 * SES event processor records it (status, counters, webhooks). Refused unless the simulator is on,
 * which only happens against a loopback SES emulator outside production.
 */
async function simulateEngagement(kind: 'open' | 'click', args: string[], { db, config }: { db: Db; config: Config }) {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, link: { type: 'string' } }, strict: true });
  if (kind === 'open' && values.link !== undefined) throw new UsageError('--link is only for simulate click');
  if (!config.sesEventSimulator) {
    throw new UsageError(
      `the SES event simulator is off (SES_EVENT_SIMULATOR=${config.SES_EVENT_SIMULATOR}, NODE_ENV=${config.NODE_ENV}, SES_ENDPOINT=${config.SES_ENDPOINT ?? 'unset'}); ` +
        `it runs only in development against the local SES emulator, e.g. SES_ENDPOINT=http://127.0.0.1:${config.SES_LOCAL_PORT} npm run cli -- simulate ${kind} --email ID`,
    );
  }
  const emailId = required(values.email, 'email');
  if (emailId.length > 100) throw new UsageError('--email is not an email id');
  const email = await db.email.findUnique({ where: { id: emailId }, include: { domain: { select: { region: true } } } });
  if (!email) throw new UsageError(`email ${emailId} does not exist`);
  if (!email.sesEmailId) throw new UsageError(`email ${emailId} has not been sent yet (status ${email.latestStatus})`);
  let link: string | undefined;
  if (kind === 'click') {
    link = values.link ?? firstLink(email.html) ?? `${config.PUBLIC_URL}/`;
    if (link.length > 2000 || !/^https?:\/\//i.test(link)) throw new UsageError('--link must be an http(s) URL of at most 2000 characters');
  }
  const message = simulatedMessageOfEmail({ ...email, sesEmailId: email.sesEmailId }, email.domain?.region ?? config.AWS_REGION);
  const job = simulatedSesEventJob(simulatedEngagementEvent(message, kind, new Date(), link));
  const redis = createRedis(config.redis);
  const queues = createQueueFactory(redis, config);
  try {
    await queues.get(queueNames.sesEvents).add(job.name, job.data, job.opts);
  } finally {
    await queues.closeAll();
    redis.disconnect();
  }
  return { queued: job.name, emailId, snsMessageId: job.data.snsMessageId, ...(link ? { link } : {}) };
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [group, action, ...rest] = argv;
  const command = commands[`${group} ${action}`];
  if (!command) {
    process.stderr.write(`${group ? `unknown command "${[group, action].filter(Boolean).join(' ')}"\n` : ''}${USAGE}\n`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const db = createDb(config.DATABASE_URL, 2);
  try {
    const result = await command(rest, { db, config });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    // parseArgs throws TypeErrors with a code for unknown or malformed flags.
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${(err as Error).message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await db.$disconnect();
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
