// npm run db:generate | db:migrate | db:diff <name> [git-rev]: Prisma without native engines
// (see packages/tools/src/prisma/prisma-cli.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDatabase } from '@mailrail/platform/db/admin';
import { generateClient, migrateDeploy, repoRoot, sqlFromSchemaSource } from '@mailrail/tools/prisma/prisma-cli';

async function main() {
  const [command, name, rev = 'HEAD'] = process.argv.slice(2);
  const url = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/mailrail';
  if (command === 'generate') {
    generateClient();
    console.log('prisma client generated');
  } else if (command === 'migrate') {
    await ensureDatabase(url);
    migrateDeploy(url);
    await createEmailLogDays(url);
  } else if (command === 'diff') {
    // A new migration from the schema as committed at `rev` to the schema in the work tree.
    // The migration test then proves the migrations and schema.prisma agree.
    if (!name || !/^[a-z0-9_]+$/.test(name)) throw new Error('usage: npm run db:diff -- <snake_case_name> [git-rev]');
    const previous = execFileSync('git', ['show', `${rev}:prisma/schema.prisma`], { cwd: repoRoot, encoding: 'utf8' });
    const sql = sqlFromSchemaSource(previous);
    if (!sql) return console.log('schema.prisma has not changed since ' + rev);
    const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const dir = path.join(repoRoot, 'prisma/migrations', `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'migration.sql'), `${sql}\n`);
    console.log(`wrote ${path.relative(repoRoot, dir)}/migration.sql`);
  } else {
    throw new Error('usage: tsx scripts/prisma.ts generate|migrate|diff <name> [git-rev]');
  }
}

/**
 * The email log's and the request log's day partitions from today on, as the worker's jobs keep them:
 * an API that takes traffic before any worker ran would otherwise store its emails in the DEFAULT
 * partition, whose days then stay there (docs/email-log.md). Creates only; retention is the job's.
 */
async function createEmailLogDays(url: string) {
  // Loaded here, not at the top: they need the generated Prisma client, which `generate` makes.
  const { configSchema } = await import('@mailrail/platform/config/schema');
  const { createSqlPool } = await import('@mailrail/platform/db/sql/executor');
  const { maintainEmailPartitions } = await import('@mailrail/domain/email-log/email-partitions');
  const { maintainRequestLogPartitions } = await import('@mailrail/domain/request-log/request-log-partitions');
  const daysAhead = configSchema.shape.EMAIL_PARTITION_DAYS_AHEAD.parse(process.env.EMAIL_PARTITION_DAYS_AHEAD);
  const sql = createSqlPool(url, 1, () => undefined);
  try {
    const report = await maintainEmailPartitions(sql, { daysAhead, bodyRetentionDays: 0, retentionDays: 0 }, new Date());
    console.log(`email log: ${report.created.length} day partitions created (${daysAhead} days ahead)`);
    const requests = await maintainRequestLogPartitions(sql, { daysAhead, retentionDays: 0 }, new Date());
    console.log(`request log: ${requests.created.length} day partitions created (${daysAhead} days ahead)`);
  } finally {
    await sql.end();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
