import { readFileSync } from 'node:fs';
import path from 'node:path';
import { useTestDatabase } from '@mailrail/testing/databases';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';

// The migration that added "Email"."recipientAddresses" fills it for the emails stored before it:
// its own UPDATE, read from the migration file, run on rows as they were then (the column empty).

const MIGRATION = path.resolve(__dirname, '../../../../prisma/migrations/20261206200000_email_recipient_addresses/migration.sql');
const t = useTestDatabase();

it("fills every old email's addresses: to, cc, bcc and the suppressed ones, bare, lower-cased, once each", async () => {
  const update = readFileSync(MIGRATION, 'utf8')
    .split(';')
    .map((s) =>
      s
        .split('\n')
        .filter((line) => !line.trim().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .find((s) => s.startsWith('UPDATE'));
  expect(update).toBeDefined();
  const team = await createTeam(t.db, 'Old emails');
  const row = (id: string, fields: Record<string, unknown>) =>
    t.db.email.create({ data: { id, teamId: team.id, from: 'a@x.org', subject: 's', to: [], recipientAddresses: [], ...fields } });
  await row('0000old1', {
    to: ['Ada <ADA@x.org>', 'bob@x.org '],
    cc: ['"Cy, C" <cy@x.org>', 'ada@x.org'],
    bcc: ['dee@x.org'],
    skippedRecipients: [{ email: 'Eve <Eve@x.org>', type: 'to', status: 'SUPPRESSED', reason: 'COMPLAINT' }, { junk: true }],
  });
  await row('0000old2', { to: ['only@x.org'], skippedRecipients: { not: 'an array' } });
  await row('0000old3', {
    to: ['gone@x.org'],
    skippedRecipients: [{ email: 'gone@x.org', type: 'to', status: 'SUPPRESSED', reason: 'MANUAL' }],
  });

  await prismaExecutor(t.db).execute(update!, []);

  const got = await t.db.email.findMany({
    where: { teamId: team.id },
    select: { id: true, recipientAddresses: true },
    orderBy: { id: 'asc' },
  });
  expect(got.map((e) => [e.id, [...e.recipientAddresses].sort()])).toEqual([
    ['0000old1', ['ada@x.org', 'bob@x.org', 'cy@x.org', 'dee@x.org', 'eve@x.org']],
    ['0000old2', ['only@x.org']],
    ['0000old3', ['gone@x.org']],
  ]);
});
