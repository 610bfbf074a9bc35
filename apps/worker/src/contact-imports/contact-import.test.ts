import { newId } from '@mailrail/platform/ids';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { queueNames } from '@mailrail/platform/queue/queues';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import { resolveColumns } from '@mailrail/domain/audience/imports/csv-mapping';
import { createUploadingImport, storeImportChunk } from '@mailrail/domain/audience/imports/import-file-store';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { registerContactImports } from './register';
import { runContactImport, type ContactImportPorts } from './run-contact-import';
import { sweepContactImports } from './sweep-imports';

// The import job against the real PostgreSQL (and, at the end, through BullMQ on the real Redis).
// Files are staged as the API leaves them: an import row with the columns resolved from the header,
// and the bytes in numbered chunks (small ones here, so multi-byte characters and records straddle
// chunk boundaries).

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv();
});
afterAll(() => env.close());

const ports = (over: Partial<ContactImportPorts> = {}): ContactImportPorts => ({
  sql: env.deps.sql,
  clock: env.deps.clock,
  batchSize: 1000,
  ...over,
});

async function newBook(opts: { doubleOptIn?: boolean; teamId?: number } = {}): Promise<string> {
  const book = await env.deps.db.contactBook.create({
    data: {
      id: newId(),
      teamId: opts.teamId ?? env.teamId,
      name: 'Imports',
      doubleOptInEnabled: opts.doubleOptIn ?? false,
      doubleOptInFrom: opts.doubleOptIn ? `news@${env.domain.name}` : null,
    },
  });
  return book.id;
}

/** Stores `csv` as the API would and returns the import id (QUEUED). */
async function stage(bookId: string, csv: string | Buffer, opts: { onExisting?: 'SKIP' | 'UPDATE'; chunkBytes?: number } = {}) {
  const id = newId();
  const bytes = Buffer.from(csv);
  const sql = env.deps.sql;
  await createUploadingImport(sql, { id, contactBookId: bookId, fileName: 'f.csv', now: new Date() });
  const chunk = opts.chunkBytes ?? 4096;
  for (let seq = 0; seq * chunk < bytes.length; seq++) await storeImportChunk(sql, id, seq, bytes.subarray(seq * chunk, (seq + 1) * chunk));
  const header = bytes
    .toString('utf8')
    .replace(/^\ufeff/, '')
    .split('\n')[0]
    .split(',');
  const columns = resolveColumns(header);
  await sql.execute(
    `UPDATE "ContactImport" SET status = 'QUEUED', columns = $2::jsonb, "onExisting" = $3::"ContactImportOnExisting" WHERE id = $1`,
    [id, JSON.stringify(columns.ok ? columns.columns : []), opts.onExisting ?? 'SKIP'],
  );
  return id;
}

const importRow = (id: string) => env.deps.db.contactImport.findUniqueOrThrow({ where: { id } });
const counters = async (id: string) => {
  const r = await importRow(id);
  return { status: r.status, rowsRead: r.rowsRead, created: r.created, updated: r.updated, skipped: r.skipped, rejected: r.rejected };
};
const rejects = (id: string) =>
  env.deps.db.contactImportReject.findMany({
    where: { importId: id },
    orderBy: { line: 'asc' },
    select: { line: true, reason: true, row: true },
  });
const contactsOf = (bookId: string) => env.deps.db.contact.findMany({ where: { contactBookId: bookId }, orderBy: { email: 'asc' } });
const chunksOf = (id: string) => env.deps.db.contactImportChunk.count({ where: { importId: id } });

describe('re-importing an export', () => {
  it("reads cells the export wrote formula-safe back as they were; a leading ' before anything else is text; no createdAt property", async () => {
    const book = await newBook();
    const csv =
      'email,firstName,lastName,subscribed,createdAt,plan,note\r\n' +
      '\'-dash@example.org,"\'=HYPERLINK(""http://evil.test"",""x"")",\'+1,true,2026-11-24T04:00:00.000Z,a,\'\'=already\r\n' +
      "ollie@example.org,'Ollie,O'Brien,false,2026-11-24T04:00:00.000Z,,'@SUM(1)\r\n";
    const id = await stage(book, csv);
    await runContactImport(ports(), id);
    expect(await counters(id)).toMatchObject({ status: 'COMPLETED', created: 2, rejected: 0 });
    const [dash, ollie] = await contactsOf(book);
    expect(dash).toMatchObject({
      email: '-dash@example.org',
      firstName: '=HYPERLINK("http://evil.test","x")',
      lastName: '+1',
      subscribed: true,
      properties: { plan: 'a', note: "'=already" },
    });
    expect(ollie).toMatchObject({ firstName: "'Ollie", lastName: "O'Brien", subscribed: false, properties: { note: '@SUM(1)' } });
  });
});

describe('typed properties', () => {
  it('stores a boolean property in its typed form (yes → "true"); a value that does not read as its type is kept as written', async () => {
    const book = await newBook();
    await env.deps.db.contactProperty.createMany({
      data: [
        { contactBookId: book, name: 'vip', type: 'BOOLEAN', position: 0 },
        { contactBookId: book, name: 'ltv', type: 'NUMBER', position: 1 },
      ],
    });
    const csv = 'email,vip,ltv,note\na@x.org,Yes,250,yes\nb@x.org,off,n/a,no\nc@x.org,maybe,,\n';
    const id = await stage(book, csv);
    await runContactImport(ports(), id);
    expect(await counters(id)).toMatchObject({ status: 'COMPLETED', created: 3, rejected: 0 });
    const [a, b, c] = await contactsOf(book);
    expect(a.properties).toEqual({ vip: 'true', ltv: '250', note: 'yes' });
    expect(b.properties).toEqual({ vip: 'false', ltv: 'n/a', note: 'no' });
    expect(c.properties).toEqual({ vip: 'maybe' });
  });
});

describe('a 10,000-row file with 17 bad rows', () => {
  it('imports the good rows and reports the 17 others with their lines and reasons', async () => {
    const book = await newBook();
    const lines = ['email,first_name,last name,plan'];
    const bad = new Map<number, { row: string; reason: RegExp }>();
    for (let i = 0; i < 10_000; i++) {
      const line = i + 2; // the header is line 1
      let row = `person${i}@example.org,Ada ${i},Lovelace,plan-${i % 5}`;
      if (i % 600 === 17) {
        const kinds: [string, RegExp][] = [
          [`person${i}@@example.org,A,B,c`, /^email: Invalid email address$/],
          [`,No,Address,x`, /^email is empty$/],
          [`person${i}@example.org,A,B,c,extra`, /^The row has 5 fields, the header 4$/],
          [`person${i}@example.org,${'x'.repeat(300)},B,c`, /^firstName: /],
        ];
        const [text, reason] = kinds[bad.size % kinds.length];
        row = text;
        bad.set(line, { row: text, reason });
      }
      lines.push(row);
    }
    expect(bad.size).toBe(17);
    const id = await stage(book, lines.join('\r\n') + '\r\n');
    expect(await runContactImport(ports(), id)).toEqual({ status: 'COMPLETED' });

    expect(await counters(id)).toEqual({ status: 'COMPLETED', rowsRead: 10_000, created: 9_983, updated: 0, skipped: 0, rejected: 17 });
    const got = await rejects(id);
    expect(got.map((r) => r.line)).toEqual([...bad.keys()]);
    for (const r of got) {
      expect(r.reason).toMatch(bad.get(r.line)!.reason);
      expect(r.row).toBe(bad.get(r.line)!.row);
    }
    expect(await env.deps.db.contact.count({ where: { contactBookId: book } })).toBe(9_983);
    const ada = await env.deps.db.contact.findFirstOrThrow({ where: { contactBookId: book, email: 'person3@example.org' } });
    expect(ada).toMatchObject({ firstName: 'Ada 3', lastName: 'Lovelace', properties: { plan: 'plan-3' }, subscribed: true });
    const row = await importRow(id);
    expect(row.startedAt).not.toBeNull();
    expect(row.finishedAt).not.toBeNull();
    // The file is gone, the report stays.
    expect(await chunksOf(id)).toBe(0);
  });
});

describe('the file', () => {
  it('fails the import with a clear error when it is not UTF-8', async () => {
    const book = await newBook();
    const id = await stage(book, Buffer.concat([Buffer.from('email,name\na@x.org,Ren'), Buffer.from([0xe9]), Buffer.from('\n')]));
    expect(await runContactImport(ports(), id)).toEqual({ status: 'FAILED' });
    const row = await importRow(id);
    expect(row.status).toBe('FAILED');
    expect(row.error).toMatch(/^The file is not UTF-8 text/);
    expect(await chunksOf(id)).toBe(0);
  });

  it('takes a BOM and multi-byte characters split across chunks', async () => {
    const book = await newBook();
    const id = await stage(book, '\ufeffemail,name\nzoe@x.org,Zoë Ñandú 🎉\n', { chunkBytes: 3 });
    await runContactImport(ports(), id);
    expect(await counters(id)).toMatchObject({ status: 'COMPLETED', created: 1 });
    expect((await contactsOf(book))[0].properties).toEqual({ name: 'Zoë Ñandú 🎉' });
  });

  it('reads quoted fields with commas, quotes and line breaks, and counts lines across them', async () => {
    const book = await newBook();
    const csv = [
      'email,firstName,note',
      '"a@x.org","Ada, Countess","line one',
      'line two, still the note"',
      'b@x.org,"Bo ""The Bold""","crlf\r\ninside"',
      'not-an-address,C,"also',
      'two lines"',
      '',
      'd@x.org,D,after a blank line',
      'e@x.org,E,"unclosed',
    ].join('\n');
    const id = await stage(book, csv);
    await runContactImport(ports(), id);
    expect(await counters(id)).toEqual({ status: 'COMPLETED', rowsRead: 5, created: 3, updated: 0, skipped: 0, rejected: 2 });
    const people = await contactsOf(book);
    expect(people.map((p) => [p.email, p.firstName, p.properties])).toEqual([
      ['a@x.org', 'Ada, Countess', { note: 'line one\nline two, still the note' }],
      ['b@x.org', 'Bo "The Bold"', { note: 'crlf\r\ninside' }],
      ['d@x.org', 'D', { note: 'after a blank line' }],
    ]);
    const got = await rejects(id);
    expect(got.map((r) => [r.line, r.row])).toEqual([
      [6, 'not-an-address,C,"also\ntwo lines"'],
      [10, ''],
    ]);
    expect(got[1].reason).toMatch(/^Not valid CSV: /);
  });
});

describe('rows a contact cannot hold', () => {
  it('reports a row with a NUL byte as a rejected row and imports the others, in one attempt', async () => {
    const book = await newBook();
    const id = await stage(book, 'email,name\na@x.org,A\nb@x.org,B\u0000ob\nc@x.org,C\n');
    expect(await runContactImport(ports(), id)).toEqual({ status: 'COMPLETED' });
    expect(await counters(id)).toEqual({ status: 'COMPLETED', rowsRead: 3, created: 2, updated: 0, skipped: 0, rejected: 1 });
    expect((await contactsOf(book)).map((c) => c.email)).toEqual(['a@x.org', 'c@x.org']);
    expect(await rejects(id)).toEqual([{ line: 3, reason: expect.stringMatching(/NUL character/), row: 'b@x.org,B\ufffdob' }]);
  });

  it('reports a record over 64 KB (a long line, a quote left open) and imports every row after it', async () => {
    const book = await newBook();
    const long = 'x'.repeat(70 * 1024);
    const csv = [
      'email,name,note',
      'a@x.org,A,',
      `b@x.org,B,${long}`,
      'c@x.org,C,"two',
      'lines"',
      `"d@x.org,lost quote ${long}`,
      'e@x.org,E,',
      'not-an-address,F,',
      'g@x.org,G,',
    ].join('\n');
    const id = await stage(book, csv);
    expect(await runContactImport(ports(), id)).toEqual({ status: 'COMPLETED' });
    expect((await contactsOf(book)).map((c) => c.email)).toEqual(['a@x.org', 'c@x.org', 'e@x.org', 'g@x.org']);
    expect(await counters(id)).toEqual({ status: 'COMPLETED', rowsRead: 7, created: 4, updated: 0, skipped: 0, rejected: 3 });
    const got = await rejects(id);
    expect(got.map((r) => r.line)).toEqual([3, 6, 8]);
    expect(got[0].reason).toMatch(/longer than 64 KB/);
    expect(got[0].row.startsWith('b@x.org,B,xxx')).toBe(true);
    expect(got[1].row.startsWith('"d@x.org,lost quote')).toBe(true);
    expect(got[2].reason).toMatch(/^email: /);
  });
});

describe('existing contacts and duplicates', () => {
  const file = 'email,firstName,plan,subscribed\nann@x.org,Ann,pro,\nbob@x.org,Bob,,no\nANN@x.org,Annie,team,\n';

  it('skip: a later row of the same address is skipped, never a second contact; a re-run creates nothing', async () => {
    const book = await newBook();
    const first = await stage(book, file);
    await runContactImport(ports(), first);
    expect(await counters(first)).toEqual({ status: 'COMPLETED', rowsRead: 3, created: 2, updated: 0, skipped: 1, rejected: 0 });
    const people = await contactsOf(book);
    expect(people.map((p) => [p.email, p.firstName, p.properties, p.subscribed, p.unsubscribeReason])).toEqual([
      ['ann@x.org', 'Ann', { plan: 'pro' }, true, null],
      ['bob@x.org', 'Bob', {}, false, 'UNSUBSCRIBED'],
    ]);
    const again = await stage(book, file);
    await runContactImport(ports(), again);
    expect(await counters(again)).toEqual({ status: 'COMPLETED', rowsRead: 3, created: 0, updated: 0, skipped: 3, rejected: 0 });
    expect(await contactsOf(book)).toEqual(people);
  });

  it("counts the contacts whose address is on the team's suppression list (another team's list does not count)", async () => {
    const book = await newBook();
    const other = await createTeam(env.deps.db, 'Other suppressions');
    await env.deps.db.suppression.createMany({
      data: [
        { id: newId(), teamId: env.teamId, email: 'gone@sup.test', reason: 'HARD_BOUNCE' },
        { id: newId(), teamId: env.teamId, email: 'gone2@sup.test', reason: 'COMPLAINT' },
        { id: newId(), teamId: other.id, email: 'ok@sup.test', reason: 'MANUAL' },
      ],
    });
    const id = await stage(book, 'email\ngone@sup.test\nok@sup.test\nGONE2@sup.test\n');
    await runContactImport(ports({ batchSize: 2 }), id);
    expect(await counters(id)).toEqual({ status: 'COMPLETED', rowsRead: 3, created: 3, updated: 0, skipped: 0, rejected: 0 });
    expect((await importRow(id)).suppressed).toBe(2);
  });

  it('skip across batches: the duplicate in a later batch is skipped too', async () => {
    const book = await newBook();
    const id = await stage(book, file);
    await runContactImport(ports({ batchSize: 1 }), id);
    expect(await counters(id)).toMatchObject({ created: 2, skipped: 1 });
    expect((await contactsOf(book)).map((p) => p.firstName)).toEqual(['Ann', 'Bob']);
  });

  it('update: later rows win, properties merge, an unsubscribed contact stays unsubscribed', async () => {
    const book = await newBook();
    await env.deps.db.contact.create({
      data: {
        id: newId(),
        contactBookId: book,
        email: 'bob@x.org',
        firstName: 'Robert',
        lastName: 'Old',
        properties: { since: '2020' },
        subscribed: false,
        unsubscribeReason: 'UNSUBSCRIBED',
      },
    });
    const id = await stage(book, file.replace('bob@x.org,Bob,,no', 'bob@x.org,Bob,gold,yes'), { onExisting: 'UPDATE' });
    await runContactImport(ports({ batchSize: 2 }), id);
    expect(await counters(id)).toEqual({ status: 'COMPLETED', rowsRead: 3, created: 1, updated: 2, skipped: 0, rejected: 0 });
    const people = await contactsOf(book);
    expect(people.map((p) => [p.email, p.firstName, p.lastName, p.properties, p.subscribed])).toEqual([
      ['ann@x.org', 'Annie', null, { plan: 'team' }, true],
      ['bob@x.org', 'Bob', 'Old', { since: '2020', plan: 'gold' }, false],
    ]);
  });

  it('double opt-in books: imported contacts are subscribed and no confirmation is sent', async () => {
    const book = await newBook({ doubleOptIn: true });
    const emailsBefore = await env.deps.db.email.count();
    const id = await stage(book, 'email\nnew@x.org\n');
    await runContactImport(ports(), id);
    expect((await contactsOf(book)).map((p) => [p.email, p.subscribed])).toEqual([['new@x.org', true]]);
    expect(await env.deps.db.email.count()).toBe(emailsBefore);
  });
});

describe('crashes', () => {
  const csv =
    'email,name\n' + Array.from({ length: 1000 }, (_, i) => (i % 100 === 5 ? `bad-${i}` : `c${i}@x.org`) + `,N${i}`).join('\n') + '\n';
  const expected = { status: 'COMPLETED', rowsRead: 1000, created: 990, updated: 0, skipped: 0, rejected: 10 };

  it('a run that dies after some batches is resumed by the retry without counting anything twice', async () => {
    const book = await newBook();
    const id = await stage(book, csv);
    const crash = ports({
      batchSize: 100,
      afterBatch: (n) => {
        if (n === 300) throw new Error('worker killed');
      },
    });
    await expect(runContactImport(crash, id)).rejects.toThrow('worker killed');
    expect(await counters(id)).toMatchObject({ status: 'RUNNING', rowsRead: 300, rejected: 3 });
    await runContactImport(ports({ batchSize: 100 }), id);
    expect(await counters(id)).toEqual(expected);
    expect(await env.deps.db.contact.count({ where: { contactBookId: book } })).toBe(990);
    expect((await rejects(id)).length).toBe(10);
  });

  it('a batch whose transaction dies before COMMIT leaves no trace; the retry writes it once', async () => {
    const book = await newBook();
    const id = await stage(book, csv);
    let transactions = 0;
    const dying: TransactionalSqlExecutor = {
      query: (t, p) => env.deps.sql.query(t, p),
      execute: (t, p) => env.deps.sql.execute(t, p),
      transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) =>
        env.deps.sql.transaction(async (tx) => {
          const out = await work(tx);
          if (++transactions === 4) throw new Error('connection lost before COMMIT');
          return out;
        }),
    };
    await expect(runContactImport(ports({ sql: dying, batchSize: 100 }), id)).rejects.toThrow('before COMMIT');
    expect(await counters(id)).toMatchObject({ rowsRead: 300, created: 297 });
    expect(await env.deps.db.contact.count({ where: { contactBookId: book } })).toBe(297);
    await runContactImport(ports({ batchSize: 100 }), id);
    expect(await counters(id)).toEqual(expected);
  });

  it('through BullMQ: a failed attempt is retried and the import completes with exact counts', async () => {
    const book = await newBook();
    const id = await stage(book, csv);
    let crashed = false;
    const worker = registerContactImports(env.deps, {
      batchSize: 100,
      afterBatch: (n) => {
        if (n === 500 && !crashed) {
          crashed = true;
          throw new Error('worker killed');
        }
      },
    });
    try {
      await env.deps.queues
        .get(queueNames.contactImports)
        .add('import', { importId: id }, { jobId: id, attempts: 3, backoff: { type: 'fixed', delay: 10 } });
      await env.waitFor(async () => (await importRow(id)).status === 'COMPLETED', 30_000);
    } finally {
      await worker.close();
    }
    expect(crashed).toBe(true);
    expect(await counters(id)).toEqual(expected);
  });

  it('through BullMQ: after the last attempt the import is FAILED with the reason, and its file is dropped', async () => {
    const book = await newBook();
    const id = await stage(book, csv);
    // Each attempt commits one more batch, then dies.
    const worker = registerContactImports(env.deps, {
      batchSize: 100,
      afterBatch: () => {
        throw new Error('disk on fire');
      },
    });
    try {
      await env.deps.queues
        .get(queueNames.contactImports)
        .add('import', { importId: id }, { jobId: id, attempts: 2, backoff: { type: 'fixed', delay: 10 } });
      await env.waitFor(async () => (await importRow(id)).status === 'FAILED', 30_000);
    } finally {
      await worker.close();
    }
    expect((await importRow(id)).error).toBe('The import stopped after 2 attempts: disk on fire');
    expect(await counters(id)).toMatchObject({ status: 'FAILED', rowsRead: 200 });
    expect(await chunksOf(id)).toBe(0);
  });
});

describe('the sweep', () => {
  it('queues the job of an import Redis lost, and deletes an upload abandoned hours ago', async () => {
    const book = await newBook();
    const lost = await stage(book, 'email\nlost@x.org\n');
    const abandoned = newId();
    await createUploadingImport(env.deps.sql, {
      id: abandoned,
      contactBookId: book,
      fileName: 'f.csv',
      now: new Date(Date.now() - 7 * 3600_000),
    });
    const fresh = newId();
    await createUploadingImport(env.deps.sql, { id: fresh, contactBookId: book, fileName: 'f.csv', now: new Date() });
    const queue = env.deps.queues.get(queueNames.contactImports);
    expect(await queue.getJob(lost)).toBeUndefined();
    await sweepContactImports(env.deps);
    expect((await queue.getJob(lost))?.data).toEqual({ importId: lost });
    expect(await env.deps.db.contactImport.findUnique({ where: { id: abandoned } })).toBeNull();
    expect(await env.deps.db.contactImport.findUnique({ where: { id: fresh } })).not.toBeNull();
    await queue.remove(lost);
  });
});

describe('webhook events', () => {
  it('writes contact.created / contact.updated only when an active webhook of the team receives them', async () => {
    const teamId = (await createTeam(env.deps.db, 'Hooks')).id;
    const events = () =>
      env.deps.db.webhookEvent.findMany({ where: { teamId }, orderBy: { type: 'asc' }, select: { type: true, data: true } });
    const quiet = await newBook({ teamId });
    await runContactImport(ports(), await stage(quiet, 'email\nquiet@x.org\n'));
    expect(await events()).toEqual([]);

    await env.deps.db.webhook.create({
      data: { id: newId(), teamId, url: 'https://hooks.example/x', secretEnc: 'unused', events: ['contact.created', 'contact.updated'] },
    });
    const book = await newBook({ teamId });
    await runContactImport(ports(), await stage(book, 'email\nann@x.org\n'));
    await runContactImport(ports(), await stage(book, 'email,firstName\nann@x.org,Ann\nbob@x.org,Bob\n', { onExisting: 'UPDATE' }));
    expect((await events()).map((e) => [e.type, (e.data as { email: string }).email]).sort()).toEqual([
      ['contact.created', 'ann@x.org'],
      ['contact.created', 'bob@x.org'],
      ['contact.updated', 'ann@x.org'],
    ]);
  });
});
