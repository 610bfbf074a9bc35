import type { EmailDraft } from '@mailrail/domain/emails/create-emails';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { createEmailCommitter } from '@mailrail/domain/emails/email-committer';
import { createIntakeSql } from '@mailrail/domain/emails/email-intake';

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
