import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import request from 'supertest';
import { seedContacts } from '@mailrail/testing/contact-seed';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { EXPORT_BATCH, exportContactsCsv } from './export';

// The export reads keyset batches by id, each its own short transaction (no connection is held
// while the client reads), so a file is not one snapshot. What it guarantees (docs/audience.md,
// "Export"): no contact twice; every contact that exists throughout, once; each row as it was when
// its batch was read; one added or deleted meanwhile appears or not depending on where its id
// falls. The response here is a stand-in that holds every batch until the test says the client
// took it (as a slow client does), so the writes land between two batches.

const CONTACTS = 3 * EXPORT_BATCH + 500;

let api: TestApi;
let book: string;
beforeAll(async () => {
  api = await startTestApi();
  book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Snapshot' }).expect(200)).body.id;
  await seedContacts((text, params) => api.deps.sql.execute(text, params), book, CONTACTS);
});
afterAll(() => api?.close());

/** A response that takes each chunk only when `drain` is emitted, calling `onChunk` first. */
function slowClient(onChunk: (n: number) => Promise<void>) {
  const res = new EventEmitter() as EventEmitter & Record<string, unknown>;
  const chunks: string[] = [];
  let ended = false;
  Object.assign(res, {
    destroyed: false,
    headersSent: false,
    status: () => res,
    setHeader: () => res,
    write: (chunk: string) => {
      res.headersSent = true;
      chunks.push(chunk);
      void onChunk(chunks.length).then(() => res.emit('drain'));
      return false;
    },
    end: () => void (ended = true),
    destroy: (err: Error) => {
      res.destroyed = true;
      throw err;
    },
  });
  return { res: res as unknown as Response, csv: () => chunks.join(''), ended: () => ended };
}

const emailsOf = (csv: string) =>
  csv
    .trim()
    .split('\r\n')
    .slice(1)
    .map((line) => line.split(',')[0]);

it('writes each contact at most once and each unchanged one once; writes between batches show where the keyset has not passed', async () => {
  const before = await api.deps.sql.query<{ email: string; firstName: string }>(
    `SELECT email, "firstName" FROM "Contact" WHERE "contactBookId" = $1 ORDER BY id`,
    [book],
  );
  const lastIds = await api.deps.sql.query<{ id: string }>(
    `SELECT id FROM "Contact" WHERE "contactBookId" = $1 ORDER BY id DESC LIMIT 10`,
    [book],
  );
  const client = slowClient(async (n) => {
    // After the header and the first batch: the rest of the book is still to be read.
    if (n !== 2) return;
    // Deleted ahead of the export (a page-by-page read would skip them)...
    await api.deps.sql.execute(`DELETE FROM "Contact" WHERE id = ANY($1::text[])`, [lastIds.map((r) => r.id)]);
    // ...added ahead of it (would appear), and added behind it (would not, but now neither)...
    await api.deps.sql.execute(
      `INSERT INTO "Contact" (id, "contactBookId", email, "updatedAt") VALUES ('zzzz-late', $1, 'late@example.com', now()), ('0000-early', $1, 'early@example.com', now())`,
      [book],
    );
    // ...and a contact further on, changed.
    await api.deps.sql.execute(`UPDATE "Contact" SET "firstName" = 'Changed' WHERE "contactBookId" = $1 AND email = $2`, [
      book,
      before[before.length - 100].email,
    ]);
  });

  await exportContactsCsv(api.deps, { teamId: api.team.teamId } as Parameters<typeof exportContactsCsv>[1], book, undefined, client.res);

  expect(client.ended()).toBe(true);
  const csv = client.csv();
  const exported = emailsOf(csv);
  expect(new Set(exported).size).toBe(exported.length);
  const deleted = new Set(before.slice(-10).map((c) => c.email));
  const untouched = before.map((c) => c.email).filter((e) => !deleted.has(e));
  expect(exported).toEqual(expect.arrayContaining(untouched));
  // Ahead of the keyset: the deletions and the change are seen, the late insert too; behind it, the early insert is not.
  expect(exported.filter((e) => deleted.has(e))).toEqual([]);
  expect(exported).toContain('late@example.com');
  expect(exported).not.toContain('early@example.com');
  expect(csv).toContain(`${before[before.length - 100].email},Changed,`);
  // The writes did commit: the next export has them.
  const after = await request(api.app).get(`/api/v1/contactBooks/${book}/contacts/export`).set(api.team.auth).buffer(true).expect(200);
  const emails = emailsOf(after.text);
  expect(emails).toHaveLength(CONTACTS - 10 + 2);
  expect(emails).toEqual(expect.arrayContaining(['late@example.com', 'early@example.com']));
  expect(after.text).toContain(',Changed,');
});
