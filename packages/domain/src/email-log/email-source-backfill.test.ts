import { readFileSync } from 'node:fs';
import path from 'node:path';
import { newEmailId } from '@mailrail/platform/ids';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { useTestDatabase } from '@mailrail/testing/databases';
import { createTeam } from '../teams/api-keys';

// The migration that gives campaign emails written during a rolling upgrade (by a worker that did
// not know the source column yet) their source, run again on a migrated database as it stands.

const database = useTestDatabase();
const MIGRATION = path.resolve(__dirname, '../../../../prisma/migrations/20261207010000_email_source_campaign_stragglers/migration.sql');

it('sets CAMPAIGN on campaign emails that read API, and nothing else', async () => {
  const team = await createTeam(database.db, 'Stragglers');
  const row = (campaignId: string | null, source: 'API' | 'SMTP' | 'CAMPAIGN') => ({
    id: newEmailId(new Date()),
    teamId: team.id,
    from: 'a@example.com',
    to: ['b@example.com'],
    subject: 'Hi',
    campaignId,
    source,
  });
  const rows = [row('camp1', 'API'), row(null, 'API'), row(null, 'SMTP'), row('camp1', 'CAMPAIGN')];
  await database.db.email.createMany({ data: rows });
  const sql = readFileSync(MIGRATION, 'utf8');
  await prismaExecutor(database.db).execute(sql);
  await prismaExecutor(database.db).execute(sql); // again: nothing left to change
  const after = await database.db.email.findMany({ where: { teamId: team.id }, select: { id: true, source: true } });
  const sourceOf = new Map(after.map((e) => [e.id, e.source]));
  expect(rows.map((r) => sourceOf.get(r.id))).toEqual(['CAMPAIGN', 'API', 'SMTP', 'CAMPAIGN']);
});
