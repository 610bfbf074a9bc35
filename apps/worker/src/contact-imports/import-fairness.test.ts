import { newId } from '@mailrail/platform/ids';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { queueNames } from '@mailrail/platform/queue/queues';
import { resolveColumns } from '@mailrail/domain/audience/imports/csv-mapping';
import { createUploadingImport, storeImportChunk } from '@mailrail/domain/audience/imports/import-file-store';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { registerContactImports } from './register';

// Imports are fair across teams: with room for a single import on the whole server, a 2-row import
// of team B queued while team A's large import runs finishes before it, and A's import still ends
// with every row counted once (it stepped back after a committed batch and resumed from there).

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv({ CONTACT_IMPORT_CONCURRENCY: '1', CONTACT_IMPORT_YIELD_EVERY_BATCHES: '2' });
});
afterAll(() => env.close());

async function stageImport(teamId: number, csv: string): Promise<string> {
  const book = await env.deps.db.contactBook.create({ data: { id: newId(), teamId, name: 'Imports' } });
  const id = newId();
  await createUploadingImport(env.deps.sql, { id, contactBookId: book.id, fileName: 'f.csv', now: new Date() });
  await storeImportChunk(env.deps.sql, id, 0, Buffer.from(csv));
  const columns = resolveColumns(csv.split('\n')[0].split(','));
  await env.deps.sql.execute(`UPDATE "ContactImport" SET status = 'QUEUED', columns = $2::jsonb WHERE id = $1`, [
    id,
    JSON.stringify(columns.ok ? columns.columns : []),
  ]);
  return id;
}

const importRow = (id: string) => env.deps.db.contactImport.findUniqueOrThrow({ where: { id } });
const queueImport = (id: string) =>
  env.deps.queues
    .get(queueNames.contactImports)
    .add('import', { importId: id }, { jobId: id, attempts: 3, backoff: { type: 'fixed', delay: 10 } });

it("a small import of team B completes while team A's large import is still running, and A's ends with exact counts", async () => {
  const teamB = (await createTeam(env.deps.db, 'Team B')).id;
  const large = await stageImport(
    env.teamId,
    'email,name\n' + Array.from({ length: 3000 }, (_, i) => `a${i}@x.org,A${i}`).join('\n') + '\n',
  );
  const small = await stageImport(teamB, 'email,name\nb1@x.org,B1\nb2@x.org,B2\n');
  let smallQueued = false;
  const worker = registerContactImports(env.deps, {
    batchSize: 100,
    // B's import arrives once A's has started (its first batch is committed).
    afterBatch: async () => {
      if (smallQueued) return;
      smallQueued = true;
      await queueImport(small);
    },
  });
  try {
    await queueImport(large);
    await env.waitFor(async () => (await importRow(large)).status === 'COMPLETED', 60_000);
    await env.waitFor(async () => (await importRow(small)).status === 'COMPLETED', 10_000);
  } finally {
    await worker.close();
  }
  const [a, b] = [await importRow(large), await importRow(small)];
  expect(b.finishedAt!.getTime()).toBeLessThan(a.finishedAt!.getTime());
  expect(b).toMatchObject({ created: 2, rejected: 0 });
  expect(a).toMatchObject({ rowsRead: 3000, created: 3000, skipped: 0, rejected: 0 });
  expect(await env.deps.db.contact.count({ where: { email: { startsWith: 'a' }, contactBook: { teamId: env.teamId } } })).toBe(3000);
});
