import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { maskUrlCredentials } from '@mailrail/platform/text/trim';

// Prisma's native engines cannot be downloaded on our machines. `generate` runs on Prisma 7's
// WebAssembly tooling; migrations run on the Prisma 6.19 CLI with its WebAssembly schema engine
// (engine "js" + @prisma/adapter-pg). Both CLIs try to fetch engines at start unless these
// variables point at an existing file, so we point them at node itself.

export const repoRoot = path.resolve(__dirname, '../../../..');
const schemaPath = path.join(repoRoot, 'prisma/schema.prisma');
// Derived files go to the temp dir (the app directory may be read-only in a container), one per checkout.
const cacheDir = path.join(os.tmpdir(), `mailrail-prisma-${createHash('sha256').update(repoRoot).digest('hex').slice(0, 8)}`);

function engineEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
    PRISMA_QUERY_ENGINE_LIBRARY: process.execPath,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
    // Even a diff between two schema files opens the adapter's connection.
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
    ...extra,
  };
}

/** The schema without its `generator client { ... }` block (found by search: a lazy regex for it is quadratic). */
function withoutGeneratorBlock(schema: string): string {
  const start = schema.search(/^generator client \{/m);
  const end = start === -1 ? -1 : schema.indexOf('\n}\n', start);
  return end === -1 ? schema : schema.slice(0, start) + schema.slice(end + '\n}\n'.length);
}

// Prisma 7 forbids `url` in the datasource block and Prisma 6 requires it, so the migration CLI
// reads a derived copy of the schema with the url added and the v7-only generator removed.
function writeMigrationSchema(schemaSource = readFileSync(schemaPath, 'utf8'), fileName = 'schema.migrate.prisma'): string {
  const source = withoutGeneratorBlock(schemaSource).replace(/(datasource db \{\n\s*provider\s*=\s*"postgresql")/, '$1\n  url      = env("DATABASE_URL")');
  mkdirSync(cacheDir, { recursive: true });
  const out = path.join(cacheDir, fileName);
  writeFileSync(out, source);
  const config = `
const { PrismaPg } = require(${JSON.stringify(require.resolve('@prisma/adapter-pg'))});
module.exports = {
  experimental: { adapter: true },
  engine: 'js',
  schema: ${JSON.stringify(path.join(cacheDir, 'schema.migrate.prisma'))},
  migrations: { path: ${JSON.stringify(path.join(repoRoot, 'prisma/migrations'))} },
  adapter: async () => new PrismaPg({ connectionString: process.env.DATABASE_URL }),
};
`;
  writeFileSync(path.join(cacheDir, 'migrate.config.js'), config);
  return out;
}

function run(cli: 'prisma' | 'prisma6', args: string[], env: NodeJS.ProcessEnv, quiet = false) {
  const bin = path.join(repoRoot, 'node_modules', cli, 'build/index.js');
  const res = spawnSync(process.execPath, [bin, ...args], { cwd: repoRoot, env, encoding: 'utf8' });
  if (!quiet || res.status !== 0) {
    process.stdout.write(res.stdout ?? '');
    process.stderr.write(res.stderr ?? '');
  }
  return res;
}

export function generateClient(): void {
  const res = run('prisma', ['generate', '--schema', schemaPath], engineEnv(), true);
  if (res.status !== 0) throw new Error('prisma generate failed');
}

/** Applies prisma/migrations to databaseUrl with the stock `migrate deploy` (no download). */
export function migrateDeploy(databaseUrl: string, quiet = false): void {
  writeMigrationSchema();
  const res = run('prisma6', ['migrate', 'deploy', '--config', path.join(cacheDir, 'migrate.config.js')], engineEnv({ DATABASE_URL: databaseUrl }), quiet);
  if (res.status !== 0) throw new Error(`prisma migrate deploy failed for ${maskUrlCredentials(databaseUrl)}`);
}

/** SQL that builds schema.prisma (or another schema source) from an empty database. */
export function sqlFromEmpty(): string {
  const schema = writeMigrationSchema();
  return diffSql(['--from-empty', '--to-schema-datamodel', schema]);
}

/** SQL that takes a database from one schema source to the current schema.prisma. */
export function sqlFromSchemaSource(previousSource: string): string {
  const schema = writeMigrationSchema();
  const previous = writeMigrationSchema(previousSource, 'schema.previous.prisma');
  return diffSql(['--from-schema-datamodel', previous, '--to-schema-datamodel', schema]);
}

function diffSql(args: string[]): string {
  const res = run('prisma6', ['migrate', 'diff', '--config', path.join(cacheDir, 'migrate.config.js'), ...args, '--script'], engineEnv(), true);
  if (res.status !== 0) throw new Error(`prisma migrate diff failed: ${res.stderr}`);
  return res.stdout.replace(/^-- This is an empty migration\.\s*$/m, '').trim();
}
