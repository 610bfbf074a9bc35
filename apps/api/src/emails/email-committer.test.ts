import type { EmailDraft } from '@mailrail/domain/emails/create-emails';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { createEmailCommitter } from '@mailrail/domain/emails/email-committer';
import { createIntakeSql } from '@mailrail/domain/emails/email-intake';
import { ALL_TO_SUPPRESSED } from '@mailrail/domain/emails/suppression';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

let api: TestApi;
let domainId: number;

beforeAll(async () => {
  api = await startTestApi();
  domainId = (await api.addDomain(api.team.teamId, 'commit.org')).id;
});

afterAll(async () => {
  await api.close();
});

const draft = (subject: string, overrides: Partial<EmailDraft> = {}): EmailDraft => ({
  teamId: api.team.teamId,
  domainId,
  region: api.config.AWS_REGION,
  source: 'API',
  from: 'a@commit.org',
  to: ['x@dest.org'],
  subject,
  text: 'T',
  ...overrides,
});

describe('createEmailCommitter', () => {
  it('drains on shutdown: sends submitted just before the pool closes are all written, none fails on an ended pool', async () => {
    // The API's shutdown order (main.ts): drain the committer, then close its own pool.
    const sql = createIntakeSql(api.config, api.deps.log);
    const warn = jest.spyOn(api.deps.log, 'warn');
    const error = jest.spyOn(api.deps.log, 'error');
    try {
      const committer = createEmailCommitter({ ...api.deps, sql, now: () => new Date() }, { maxBatch: 5, concurrency: 2 });
      const calls = Array.from({ length: 30 }, (_, i) => committer.submit([draft(`drain-${i}`)]));
      const settled = Promise.allSettled(calls);
      await committer.drain();
      await sql.end();
      const results = await settled;
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      const ids = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.map((c) => c.id) : []));
      expect(await api.deps.db.email.count({ where: { id: { in: ids } } })).toBe(30);
      expect([...warn.mock.calls, ...error.mock.calls]).toEqual([]);
      await committer.drain(); // idle: answers at once
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it('writes concurrent calls together and answers each with its own ids, in order', async () => {
    const committer = createEmailCommitter({ ...api.deps, now: () => new Date() }, { maxBatch: 500, concurrency: 1 });
    const calls = Array.from({ length: 20 }, (_, i) => committer.submit([draft(`c${i}-0`), draft(`c${i}-1`)]));
    const results = await Promise.all(calls);
    for (const [i, created] of results.entries()) {
      const rows = await api.deps.db.email.findMany({ where: { id: { in: created.map((c) => c.id) } } });
      expect(created.map((c) => rows.find((r) => r.id === c.id)!.subject)).toEqual([`c${i}-0`, `c${i}-1`]);
    }
  });

  it('fails only the call whose rows cannot be written; its neighbours are committed', async () => {
    const committer = createEmailCommitter({ ...api.deps, now: () => new Date() }, { maxBatch: 500, concurrency: 1 });
    // A domain deleted after validation: the foreign key refuses the row.
    const [good1, bad, good2] = await Promise.allSettled([
      committer.submit([draft('iso-good-1')]),
      committer.submit([draft('iso-bad-1'), draft('iso-bad-2', { domainId: 987654 })]),
      committer.submit([draft('iso-good-2')]),
    ]);
    expect(good1.status).toBe('fulfilled');
    expect(good2.status).toBe('fulfilled');
    expect(bad.status).toBe('rejected');
    const subjects = (await api.deps.db.email.findMany({ where: { subject: { startsWith: 'iso-' } } })).map((e) => e.subject).sort();
    // The bad call is all-or-nothing: its valid row was not written either.
    expect(subjects).toEqual(['iso-good-1', 'iso-good-2']);
  });

  it('checks suppressions inside the insert: one statement for a flush without any; with one, only its call changes', async () => {
    await api.deps.db.suppression.create({
      data: { id: 'committer-suppressed', teamId: api.team.teamId, email: 'blocked@dest.org', reason: 'MANUAL' },
    });
    const statements: string[] = [];
    const sql: SqlExecutor = {
      query: (statement, params) => (
        statements.push(typeof statement === 'string' ? statement : statement.name),
        api.deps.sql.query(statement, params)
      ),
      execute: (statement, params) => (
        statements.push(typeof statement === 'string' ? statement : statement.name),
        api.deps.sql.execute(statement, params)
      ),
    };
    const committer = createEmailCommitter({ ...api.deps, sql, now: () => new Date() }, { maxBatch: 500, concurrency: 1 });

    const clean = await Promise.all([committer.submit([draft('sup-clean-1')]), committer.submit([draft('sup-clean-2')])]);
    expect(statements).toEqual(['mailrail_insert_emails_unless_suppressed']);
    expect(clean.flat().map((c) => c.status)).toEqual(['QUEUED', 'QUEUED']);

    statements.length = 0;
    const claim = { teamId: api.team.teamId, key: 'k-suppressed-flush', bodyHash: 'h' };
    const [all, some, none] = await Promise.all([
      committer.submit([draft('sup-all', { to: ['Blocked <BLOCKED@dest.org>'] })]),
      committer.submit([draft('sup-some', { to: ['ok@dest.org', 'blocked@dest.org'], cc: ['blocked@dest.org'] })], claim),
      committer.submit([draft('sup-none')]),
    ]);
    // The first statement wrote nothing; the second wrote every call with the rule applied.
    expect(statements).toEqual(['mailrail_insert_emails_unless_suppressed', 'mailrail_insert_emails']);
    expect([all[0].status, some[0].status, none[0].status]).toEqual(['SUPPRESSED', 'QUEUED', 'QUEUED']);
    const stored = (id: string) => api.deps.db.email.findUniqueOrThrow({ where: { id } });
    const events = (emailId: string) => api.deps.db.emailEvent.findMany({ where: { emailId } });
    expect(await stored(all[0].id)).toMatchObject({ latestStatus: 'SUPPRESSED', to: ['Blocked <BLOCKED@dest.org>'] });
    const blocked = { email: 'Blocked <BLOCKED@dest.org>', type: 'to', status: 'SUPPRESSED', reason: 'MANUAL' };
    expect((await events(all[0].id)).map((e) => [e.status, e.data])).toEqual([
      ['SUPPRESSED', { error: ALL_TO_SUPPRESSED, skippedRecipients: [blocked] }],
    ]);
    expect(await stored(some[0].id)).toMatchObject({ latestStatus: 'QUEUED', to: ['ok@dest.org'], cc: [] });
    expect(await stored(none[0].id)).toMatchObject({ latestStatus: 'QUEUED', subject: 'sup-none' });
    // Written once: three emails, and the call's idempotency record names the id it was answered.
    expect(
      await api.deps.db.email.count({ where: { subject: { startsWith: 'sup-' }, NOT: { subject: { startsWith: 'sup-clean' } } } }),
    ).toBe(3);
    const record = await api.deps.db.idempotencyRecord.findUniqueOrThrow({
      where: { teamId_key: { teamId: api.team.teamId, key: 'k-suppressed-flush' } },
    });
    expect(record.emailIds).toEqual([some[0].id]);
  });

  it('stores an Idempotency-Key record with its call; of two calls with one key in a flush, one writes', async () => {
    const committer = createEmailCommitter({ ...api.deps, now: () => new Date() }, { maxBatch: 500, concurrency: 1 });
    const claim = { teamId: api.team.teamId, key: 'k-one-flush', bodyHash: 'h' };
    const calls = await Promise.allSettled([
      committer.submit([draft('idem-flush-a1'), draft('idem-flush-a2')], claim),
      committer.submit([draft('idem-flush-b1')], claim),
      committer.submit([draft('idem-flush-other')]),
    ]);
    // The combined write fails on the key; each call is then written alone and one of the two wins.
    expect(calls[2].status).toBe('fulfilled');
    const won = calls.slice(0, 2).filter((c) => c.status === 'fulfilled');
    const lost = calls.slice(0, 2).filter((c) => c.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost[0]).toMatchObject({ reason: { code: '23505', constraint: 'IdempotencyRecord_pkey' } });
    const winnerIds = (won[0] as PromiseFulfilledResult<{ id: string }[]>).value.map((c) => c.id);
    const row = await api.deps.db.idempotencyRecord.findUniqueOrThrow({
      where: { teamId_key: { teamId: api.team.teamId, key: 'k-one-flush' } },
    });
    expect(row.emailIds).toEqual(winnerIds);
    const written = await api.deps.db.email.findMany({ where: { subject: { startsWith: 'idem-flush-' } } });
    expect(
      written
        .filter((e) => e.subject !== 'idem-flush-other')
        .map((e) => e.id)
        .sort(),
    ).toEqual([...winnerIds].sort());
  });

  it('never splits one call across flushes, even when it exceeds maxBatch', async () => {
    const committer = createEmailCommitter({ ...api.deps, now: () => new Date() }, { maxBatch: 3, concurrency: 1 });
    const [a, b] = await Promise.all([
      committer.submit([draft('s1'), draft('s2')]),
      committer.submit([1, 2, 3, 4, 5].map((i) => draft(`big${i}`))),
    ]);
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(5);
    expect(committer.stats()).toEqual({ pending: 0, pendingDrafts: 0, inFlight: 0 });
  });
});
