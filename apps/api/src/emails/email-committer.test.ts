import type { EmailDraft } from '@mailrail/domain/emails/create-emails';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { createEmailCommitter } from '@mailrail/domain/emails/email-committer';

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
