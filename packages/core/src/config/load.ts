import { configSchema, type Config } from './schema';

export class ConfigError extends Error {}

const DEV_SECRET = 'dev-secret-change-me-dev-secret-change-me';

/** Reads and validates the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  if (c.NODE_ENV === 'production' && c.SECRET === DEV_SECRET) {
    throw new ConfigError('Invalid configuration:\n  SECRET: must be set in production (at least 32 random characters)');
  }
  const sesRegions = (c.SES_REGIONS ?? c.AWS_REGION).split(',').map((r) => r.trim()).filter(Boolean);
  for (const r of sesRegions) {
    if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(r)) {
      throw new ConfigError(`Invalid configuration:\n  SES_REGIONS: "${r}" is not an AWS region`);
    }
  }
  if (!sesRegions.includes(c.AWS_REGION)) sesRegions.unshift(c.AWS_REGION);
  return { ...c, sesRegions };
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
