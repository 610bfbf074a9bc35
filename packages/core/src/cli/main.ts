// Admin CLI: `npm run cli -- <command>`. Prints JSON on stdout; bad arguments exit with 2.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config/load';
import type { Config } from '../config/schema';
import { createDb, type Db } from '../db/client';
import { createRedis } from '../redis/client';
import { apiKeyRevokedChannel, createApiKey, createTeam, revokeApiKey } from '../teams/api-keys';
import { insertDomain } from '../domains/add-domain';

class UsageError extends Error {}

const USAGE = `usage: npm run cli -- <command>
  team create --name NAME
  apikey create --team ID [--permission FULL|SENDING] [--domain ID] [--name NAME]
  apikey revoke --key KEY_OR_PREFIX
  domain add --team ID --name example.com [--region us-east-1] [--verified]`;

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
    if (permission !== 'FULL' && permission !== 'SENDING') throw new UsageError(`--permission must be FULL or SENDING, got "${values.permission}"`);
    await teamMustExist(db, teamId);
    let domainId: number | undefined;
    if (values.domain !== undefined) {
      domainId = positiveInt(values.domain, 'domain');
      if (!(await db.domain.findFirst({ where: { id: domainId, teamId } }))) throw new UsageError(`domain ${domainId} is not a domain of team ${teamId}`);
    }
    const { apiKey } = await createApiKey(db, { teamId, permission, domainId, name: values.name });
    return { apiKey };
  },
  'apikey revoke': async (args, { db, config }) => {
    const { values } = parseArgs({ args, options: { key: { type: 'string' } }, strict: true });
    const revoked = await revokeApiKey(db, required(values.key, 'key'));
    if (!revoked) throw new UsageError(`no active API key matches "${values.key}"`);
    // Tell every API replica to drop its cached copy now rather than at cache expiry.
    const redis = createRedis(config.REDIS_URL);
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
    const name = required(values.name, 'name').toLowerCase();
    if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name)) throw new UsageError(`--name "${name}" is not a domain name`);
    const region = values.region ?? config.AWS_REGION;
    if (!config.sesRegions.includes(region)) throw new UsageError(`--region must be one of ${config.sesRegions.join(', ')}`);
    await teamMustExist(db, teamId);
    if (await db.domain.findUnique({ where: { name } })) throw new UsageError(`domain ${name} already exists`);
    const domain = await insertDomain(db, config.SECRET, { teamId, name, region, dkimSelector: config.DKIM_SELECTOR, verified: values.verified });
    const { dkimPrivateKeyEnc: _secret, ...visible } = domain;
    return visible;
  },
};

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
