import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { queueNames } from '@mailrail/platform/queue/queues';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';

// Sends are fair across teams (issue 40): a team's burst on a shared send queue cannot hold back
// another team's mail. Team A stores 400 emails at once, team B one email after them; with first
// in, first out B's was the 401st message SES saw. The worker runs one SES call at a time, so the
// order SES sees is the order the queue hands the jobs out, whatever the machine's speed.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv({ SEND_CONCURRENCY: '1' });
});
afterAll(async () => {
  await env?.close();
});

async function otherTeam(name: string) {
  const team = await createTeam(env.deps.db, name);
  const domain = await insertDomain(env.deps.db, env.config.SECRET, {
    teamId: team.id,
    name: `${name.toLowerCase().replace(/\W+/g, '-')}.example`,
    region: env.domain.region,
    dkimSelector: env.config.DKIM_SELECTOR,
    verified: true,
  });
  return { teamId: team.id, domainId: domain.id, from: `B <hi@${domain.name}>` };
}

const position = (address: string) => env.ses.messages.findIndex((m) => m.destination.to.includes(address));

it("one team's burst of 400 emails holds another team's email back by at most a job per team", async () => {
  const b = await otherTeam('Team B');
  const burst = await env.createEmails(Array.from({ length: 400 }, (_, i) => ({ to: [`a-${i}@example.net`] })));
  const [single] = await env.createEmails([{ ...b, to: ['b-0@example.net'] }]);
  const queue = env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  // B's job takes place 1 of its team, as A's first group did: it is next after that group.
  expect((await queue.getJob(single))?.opts.priority).toBe(1);

  await env.start();
  await env.waitFor(async () => env.ses.messages.length === 401, 60_000);
  // Three emails in flight per SES call (send-worker.ts): B's job starts once the lane has room,
  // after at most the jobs already running, each a group of at most 16 of A's emails.
  expect(position('b-0@example.net')).toBeLessThan(3 * 16 + 1);
  // A's own emails keep their order: its first email went first, its last went last.
  expect(position('a-0@example.net')).toBe(0);
  expect(position('a-399@example.net')).toBe(400);
  expect((await env.email(single)).latestStatus).toBe('SENT');
  expect(burst).toHaveLength(400);
});

it('two busy teams take turns', async () => {
  const c = await otherTeam('Team C');
  const d = await otherTeam('Team D');
  env.ses.reset();
  // Scheduled ahead, each email a job of its own; both fall due in the same minute, whose places
  // they count. The queue is paused while they are stored; then their time is moved into the past
  // (in PostgreSQL, and their delayed jobs promoted), so both teams' jobs wait together before any
  // is taken, however long storing them took.
  const queue = env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  await queue.pause();
  try {
    const due = new Date(Date.now() + 3_600_000);
    const ids = [
      ...(await env.createEmails(Array.from({ length: 30 }, (_, i) => ({ ...c, to: [`c-${i}@example.net`], scheduledAt: due })))),
      ...(await env.createEmails(Array.from({ length: 30 }, (_, i) => ({ ...d, to: [`d-${i}@example.net`], scheduledAt: due })))),
    ];
    expect((await queue.getJobCounts('delayed')).delayed).toBe(60);
    await env.deps.db.email.updateMany({ where: { id: { in: ids } }, data: { scheduledAt: new Date(Date.now() - 1000) } });
    // Oldest first, as they would fall due (Queue.promoteJobs would drop their priorities).
    for (const job of (await queue.getJobs(['delayed'])).reverse()) await job.promote();
  } finally {
    await queue.resume();
  }
  await env.waitFor(async () => env.ses.messages.length === 60, 60_000);
  const order = env.ses.messages.map((m) => m.destination.to[0][0]).join('');
  // Each team's n-th email has place n: the two alternate, never more than a few in a row (the
  // lane's jobs in flight start together). First in, first out sent 30 of C's, then D's.
  const longestRun = Math.max(...(order.match(/c+|d+/g) ?? []).map((run) => run.length));
  expect(longestRun).toBeLessThanOrEqual(3);
});
