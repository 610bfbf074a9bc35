import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { dropDatabase, ensureDatabase } from './admin';
import { createDb } from './client';
import { repoRoot, sqlFromEmpty } from '@mailrail/tools/prisma/prisma-cli';
import { templateDatabaseName, testServerUrl } from '@mailrail/testing/databases';

// The migrations and schema.prisma must describe the same database: a database migrated the way
// `npm run db:migrate` does it must equal one built straight from schema.prisma, but for what
// Prisma cannot describe (migrations 20261124061500_email_log_partitions and
// 20261207020000_request_log_partitions, docs/email-log.md): the partitioning of "Email",
// "EmailEvent" and "RequestLog" and the foreign key from "EmailEvent" to "Email" that the
// partitioned database does without. withoutPartitioning() takes exactly those out. Nor can it
// describe a trigger: "Contact_changedTxid" and its function (20261208110000_automation_triggers),
// which withoutContactTrigger() takes out after checking they are there.

const suffix = Math.random().toString(36).slice(2, 8);
const migratedUrl = `${testServerUrl}/mr_mig_${suffix}`;
const fromSchemaUrl = `${testServerUrl}/mr_schema_${suffix}`;

function schemaDump(url: string): string {
  const dump = execFileSync('pg_dump', ['--schema-only', '--no-owner', '--no-privileges', '--exclude-table=_prisma_migrations', url], {
    encoding: 'utf8',
  });
  return dump
    .split('\n')
    .filter((l) => !l.startsWith('--') && !l.startsWith('SET ') && !l.startsWith('SELECT pg_catalog') && !l.startsWith('\\'))
    .join('\n')
    .replace(/\n{2,}/g, '\n');
}

const PARTITION_OBJECT = /"(Email|EmailEvent|RequestLog)_(default|legacy|p\d{8})[_"]/;

/** A dump as if "Email", "EmailEvent" and "RequestLog" were plain tables: their partitions gone, the parents as Prisma builds them. */
function withoutPartitioning(dump: string): string {
  return dump
    .split(/;\n/)
    .filter((statement) => !PARTITION_OBJECT.test(statement))
    .join(';\n')
    .replace(/\n\)\nPARTITION BY RANGE \([^)]*\)/g, '\n)')
    .replace(/ ON ONLY public\./g, ' ON public.')
    .replace(/^ALTER TABLE public\."(Email|EmailEvent|RequestLog)"$/gm, 'ALTER TABLE ONLY public."$1"');
}

/** The migrated dump without the trigger that stamps Contact.changedTxid on update, and its function. */
function withoutContactTrigger(dump: string): string {
  return dump
    .split(/;\n/)
    .filter((statement) => !statement.includes('contact_changed_txid'))
    .join(';\n');
}

/** The schema's dump without the one foreign key the partitioned database does without. */
function withoutEventForeignKey(dump: string): string {
  return dump
    .split(/;\n/)
    .filter((statement) => !statement.includes('"EmailEvent_emailId_fkey"'))
    .join(';\n');
}

beforeAll(async () => {
  // The migrated database: a copy of the template every test file starts from, which jest's global
  // setup built with `prisma migrate deploy` from an empty database, as `npm run db:migrate` does
  // (packages/testing/src/databases.ts; its name carries the migrations' hash, so it is never
  // stale). Migrating again here took about 25 s of the jest stage for the same database.
  await ensureDatabase(migratedUrl, templateDatabaseName());
  await ensureDatabase(fromSchemaUrl);
  const c = new Client({ connectionString: fromSchemaUrl });
  await c.connect();
  // schema.prisma cannot declare extensions: the migrations create them, so the schema's own
  // database gets the same ones before its tables (and their operator classes) are built.
  await c.query(extensionsCreatedByMigrations().join(';\n'));
  await c.query(sqlFromEmpty());
  await c.end();
}, 120_000);

function extensionsCreatedByMigrations(): string[] {
  const dir = path.join(repoRoot, 'prisma/migrations');
  return readdirSync(dir)
    .filter((n) => !n.endsWith('.toml'))
    .flatMap((n) => readFileSync(path.join(dir, n, 'migration.sql'), 'utf8').match(/^CREATE EXTENSION IF NOT EXISTS \w+/gm) ?? []);
}

afterAll(async () => {
  await dropDatabase(migratedUrl);
  await dropDatabase(fromSchemaUrl);
});

describe('migrations', () => {
  it('produce exactly the database that schema.prisma describes', () => {
    const migrated = schemaDump(migratedUrl);
    expect(migrated).toContain('CREATE TABLE public."Email"');
    expect(migrated).toMatch(/CREATE TABLE public."Email" \([^;]*\nPARTITION BY RANGE \(id\)/);
    expect(migrated).toMatch(/CREATE TABLE public."EmailEvent" \([^;]*\nPARTITION BY RANGE \("emailId"\)/);
    expect(migrated).toMatch(/CREATE TABLE public."RequestLog" \([^;]*\nPARTITION BY RANGE \("createdAt"\)/);
    expect(migrated).not.toContain('"EmailEvent_emailId_fkey"');
    expect(migrated).toContain(
      'CREATE TRIGGER "Contact_changedTxid" BEFORE UPDATE ON public."Contact" FOR EACH ROW EXECUTE FUNCTION public.contact_changed_txid()',
    );
    expect(withoutContactTrigger(withoutPartitioning(migrated))).toEqual(withoutEventForeignKey(schemaDump(fromSchemaUrl)));
  });

  it('are recorded in Prisma’s own _prisma_migrations table with Prisma’s checksums', async () => {
    const dir = path.join(repoRoot, 'prisma/migrations');
    const folders = readdirSync(dir)
      .filter((n) => !n.endsWith('.toml'))
      .sort();
    const c = new Client({ connectionString: migratedUrl });
    await c.connect();
    const { rows } = await c.query('SELECT migration_name, checksum, finished_at FROM _prisma_migrations ORDER BY migration_name');
    await c.end();
    expect(rows.map((r) => r.migration_name)).toEqual(folders);
    for (const r of rows) {
      const sql = readFileSync(path.join(dir, r.migration_name, 'migration.sql'));
      expect(r.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(r.finished_at).not.toBeNull();
    }
  });

  it('leave every model readable and writable through the generated client', async () => {
    const db = createDb(migratedUrl, 2);
    try {
      const team = await db.team.create({ data: { name: 't' } });
      const domain = await db.domain.create({ data: { teamId: team.id, name: 'example.com', publicKey: 'p' } });
      await db.apiKey.create({
        data: { clientId: 'abcdefghij', tokenHash: 'h', partialToken: 'x', name: 'k', teamId: team.id, domainId: domain.id },
      });
      await db.localSesIdentity.create({
        data: { identity: 'example.com', region: 'us-east-1', dkimSelector: 's', dkimPublicKey: 'p', mailFromDomain: 'mail.example.com' },
      });
      const email = await db.email.create({
        data: {
          id: 'e1',
          teamId: team.id,
          domainId: domain.id,
          from: 'a@example.com',
          to: ['b@example.org'],
          subject: 's',
          headers: { 'X-A': '1' },
        },
      });
      await db.emailEvent.create({ data: { emailId: email.id, status: 'QUEUED', data: { a: 1 } } });
      await db.sesNotification.create({ data: { messageId: 'm1' } });
      await db.template.create({ data: { id: 't1', teamId: team.id, name: 'n', subject: 's' } });
      const book = await db.contactBook.create({ data: { id: 'b1', teamId: team.id, name: 'b', variables: ['company'] } });
      await db.contact.create({ data: { id: 'c1', contactBookId: book.id, email: 'x@example.org', properties: { company: 'A' } } });
      const campaign = await db.campaign.create({
        data: { id: 'cp1', teamId: team.id, name: 'c', from: 'a@example.com', subject: 's', contactBookId: book.id, cc: ['c@example.org'] },
      });
      await db.campaignEmail.create({ data: { campaignId: campaign.id, contactId: 'c1', email: 'x@example.org', emailId: email.id } });
      await db.suppression.create({ data: { id: 's1', teamId: team.id, email: 'x@example.org', reason: 'HARD_BOUNCE' } });
      const hook = await db.webhook.create({
        data: { id: 'w1', teamId: team.id, url: 'https://example.org/h', secretEnc: 'x', events: ['email.sent'], domainIds: [domain.id] },
      });
      const event = await db.webhookEvent.create({ data: { id: 'we1', teamId: team.id, type: 'email.sent', data: {} } });
      await db.webhookDelivery.create({ data: { id: 'wd1', webhookId: hook.id, eventId: event.id } });
      await db.dailyEmailUsage.create({
        data: { teamId: team.id, domainId: domain.id, date: '2026-11-22', type: 'TRANSACTIONAL', sent: 1 },
      });
      await db.cumulatedMetrics.create({ data: { teamId: team.id, domainId: domain.id, delivered: 1 } });
      const user = await db.user.create({ data: { email: 'ada@example.org', passwordHash: 'h' } });
      await db.membership.create({ data: { userId: user.id, teamId: team.id, role: 'ADMIN' } });
      const day = new Date(Date.now() + 86_400_000);
      await db.session.create({ data: { tokenHash: 'sh', userId: user.id, csrfToken: 'c', expiresAt: day, absoluteExpiresAt: day } });
      await db.userToken.create({ data: { tokenHash: 'th', userId: user.id, purpose: 'PASSWORD_RESET', expiresAt: day } });
      await db.invitation.create({
        data: { teamId: team.id, email: 'bob@example.org', role: 'MEMBER', tokenHash: 'ih', invitedById: user.id, expiresAt: day },
      });

      const read = await db.team.findUniqueOrThrow({
        where: { id: team.id },
        include: {
          apiKeys: true,
          domains: true,
          emails: { include: { emailEvents: true } },
          templates: true,
          contactBooks: { include: { contacts: true, campaigns: { include: { recipients: true } } } },
          suppressions: true,
          webhooks: { include: { deliveries: true } },
          webhookEvents: true,
          dailyUsage: true,
          cumulated: true,
          memberships: { include: { user: { include: { sessions: true, tokens: true } } } },
          invitations: true,
        },
      });
      expect(read.emails[0].headers).toEqual({ 'X-A': '1' });
      expect(read.emails[0].emailEvents[0].data).toEqual({ a: 1 });
      expect(read.contactBooks[0].contacts[0].properties).toEqual({ company: 'A' });
      expect(read.contactBooks[0].campaigns[0].recipients).toHaveLength(1);
      expect(read.contactBooks[0].campaigns[0].cc).toEqual(['c@example.org']);
      expect(read.webhooks[0].deliveries).toHaveLength(1);
      expect(read.dailyUsage[0].sent).toBe(1);
      expect(read.cumulated[0].delivered).toBe(1);
      expect(read.memberships[0].user.sessions).toHaveLength(1);
      expect(read.memberships[0].user.tokens[0].purpose).toBe('PASSWORD_RESET');
      expect(read.invitations[0].invitedById).toBe(user.id);
      expect(await db.localSesIdentity.count()).toBe(1);
      expect(await db.sesNotification.count()).toBe(1);
      // Cascades hold: deleting the team removes everything it owns.
      await db.team.delete({ where: { id: team.id } });
      expect(await db.email.count()).toBe(0);
      expect(await db.contact.count()).toBe(0);
      expect(await db.invitation.count()).toBe(0);
      // A user outlives a team; their sessions and tokens go with the user.
      await db.user.delete({ where: { id: user.id } });
      expect(await db.session.count()).toBe(0);
    } finally {
      await db.$disconnect();
    }
  });
});
