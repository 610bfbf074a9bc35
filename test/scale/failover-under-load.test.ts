// Issue 22's proof, "Redis failover during a burst and a running campaign": a local Redis Cluster
// (3 masters, 3 replicas), 2 API and 3 worker processes (the production entry points), the fault
// suite's SES fake counting messages per email id. While a 20,000-email burst arrives through both
// APIs (batches with Idempotency-Keys, some sent twice) and a campaign runs:
//   1. CLUSTER FAILOVER (lossless) of the master that owns the send queue's slot;
//   2. kill -9 of the master that owns it then;
//   3. kill -9 of a master that owns Idempotency-Keys while requests with those keys arrive again.
// Every email reaches SES exactly once and is SENT, with no stretch of one lease, one sweep and one
// SES call in which none became SENT while some were not (how long the backlog takes is this
// machine's speed: a figure), no process is restarted, and the API answers only 200, 409 or 503
// (the client retries 409 and 503 with the same key). Figures: bench/HISTORY.md; how to run: docs/redis.md.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { queueNames } from '@mailrail/platform/queue/queues';
import { startLocalRedisCluster, type ClusterNode, type LocalRedisCluster } from '@mailrail/testing/redis-cluster';
import { addWorkers, emailIdOf, repoRoot, sleep, startStack, waitFor, type Stack } from '../faults/stack';
import { api, createBook } from '../faults/campaign-scenario';
import { recordFigures } from './figures';

const BURST = Number(process.env.SCALE_BURST ?? 20_000);
const CAMPAIGN = Number(process.env.SCALE_CAMPAIGN ?? 2_000);
const BATCH = 100; // MAX_BATCH of POST /api/v1/emails/batch
// An SES call that times out after the fake accepted it is sent again (SES has no idempotency): the
// fake lives in this busy process, so its answers get a generous timeout, inside a longer lease.
const SES_TIMEOUT_MS = 10_000;
const LEASE_MS = 30_000;
const SWEEP_MS = 2_000; // SEND_SWEEP_CRON of the fault stack: every 2 s
/**
 * The client keeps at most this many accepted emails ahead of SES: a steady burst the workers keep
 * up with, so what is left at the last answer is what the failovers held back, not a queue that
 * 20,000 emails accepted at once would leave (that would time the drain, not the failovers).
 */
const MAX_AHEAD = 1_000;
const ALLOWED = new Set([200, 409, 503]);
const logDir = path.join(repoRoot, '.cache/faults'); // the stack's process logs

let cluster: LocalRedisCluster;
let stack: Stack;

beforeAll(async () => {
  cluster = await startLocalRedisCluster();
  stack = await startStack('scale-failover', {
    REDIS_CLUSTER_NODES: cluster.nodes,
    CAMPAIGN_CHUNK_SIZE: '500',
    SES_TIMEOUT_MS: String(SES_TIMEOUT_MS),
    SEND_LEASE_SECONDS: String(LEASE_MS / 1000),
    // Five processes on a PostgreSQL that other suites share: a smaller pool each (the stack's is 10).
    DATABASE_POOL_SIZE: '5',
  });
}, 180_000);

afterAll(async () => {
  // A client of a node killed below may wait on it: bounded, and jest.scale.config.ts forces the exit.
  await Promise.race([stack?.close().catch(() => undefined), sleep(60_000)]);
  await cluster?.stop();
}, 120_000);

interface BatchRequest {
  key: string;
  body: { from: string; to: string; subject: string; text: string }[];
  /** The email ids of the first 200 answer. */
  ids?: string[];
}

/** What the APIs answered, every attempt counted. */
const statuses = new Map<number | string, number>();
const count = (status: number | string) => statuses.set(status, (statuses.get(status) ?? 0) + 1);

/**
 * Posts one batch with its Idempotency-Key until it is answered 200, as a client following the API
 * reference does: 503 (Redis unavailable) and 409 (the same key still running) are retried with the
 * same key, on the other API. Answers the email ids; any other answer fails the request.
 */
async function post(apis: string[], req: BatchRequest, first: number): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    const url = apis[(first + attempt) % apis.length];
    let status: number | string;
    let text = '';
    try {
      const res = await fetch(`${url}/api/v1/emails/batch`, {
        method: 'POST',
        headers: { ...stack.team.auth, 'Content-Type': 'application/json', 'Idempotency-Key': req.key },
        body: JSON.stringify(req.body),
        signal: AbortSignal.timeout(60_000),
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      status = `error:${(err as Error).name}`;
    }
    count(status);
    if (status === 200) return (JSON.parse(text) as { data: { emailId: string }[] }).data.map((d) => d.emailId);
    if (status !== 503 && status !== 409) throw new Error(`${req.key}: ${status} ${text.slice(0, 300)}`);
    if (attempt > 600) throw new Error(`${req.key}: still ${status} after ${attempt} attempts`);
    await sleep(100 + Math.min(attempt, 10) * 100);
  }
}

/** Burst emails accepted (first answers) and seen at SES (campaign mail goes to people.example.net). */
const burst = { accepted: 0, atSes: 0, seen: 0 };
function burstAhead(): number {
  const messages = stack.ses.messages;
  for (; burst.seen < messages.length; burst.seen++)
    if (!messages[burst.seen].destination.to[0].endsWith('@people.example.net')) burst.atSes++;
  return burst.accepted - burst.atSes;
}

/**
 * Runs `reqs` with `concurrency` clients over both APIs; a request's first send waits while
 * MAX_AHEAD emails are ahead of SES, a repeated one does not; each answer's ids are checked against
 * the request's first answer.
 */
async function send(apis: string[], reqs: BatchRequest[], concurrency: number, mismatches: string[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      while (next < reqs.length) {
        const req = reqs[next++];
        while (!req.ids && burstAhead() > MAX_AHEAD) await sleep(100);
        const ids = await post(apis, req, client);
        if (!req.ids) {
          req.ids = ids;
          burst.accepted += ids.length;
        } else if (ids.join() !== req.ids.join()) mismatches.push(req.key);
      }
    }),
  );
}

function batch(key: string, n: number, from: string): BatchRequest {
  return {
    key,
    body: Array.from({ length: n }, (_, i) => ({ from, to: `${key}-${i}@example.net`, subject: `Burst ${key}`, text: 'Hi' })),
  };
}

const slotOf = async (key: string) => Number(await stack.redis.cluster('KEYSLOT', key));

/** Waits until `port` no longer serves `slot` and another master does; answers it and the time it took. */
async function waitForNewOwner(slot: number, oldPort: number, since: number): Promise<{ node: ClusterNode; ms: number }> {
  const node = await waitFor(
    async () => {
      const owner = await cluster.ownerOf(slot);
      return owner && owner.port !== oldPort ? owner : null;
    },
    60_000,
    `a new master for slot ${slot}`,
  );
  return { node, ms: Date.now() - since };
}

/**
 * For a failing run: where each lost email stands in PostgreSQL and in its send queue, and what the
 * maintenance queue's schedulers (the sweeper among them) hold; a line each.
 */
async function describeLost(lostIds: string[]): Promise<string[]> {
  if (lostIds.length === 0) return [];
  const rows = await stack.db.email.findMany({
    where: { id: { in: lostIds } },
    select: {
      id: true,
      latestStatus: true,
      isMarketing: true,
      sendLeaseUntil: true,
      sesCallStartedAt: true,
      sendAttempts: true,
      sendJobId: true,
    },
  });
  const now = Date.now();
  const lines = await Promise.all(
    rows.map(async (r) => {
      const queue = stack.queues.get(queueNames.send(stack.team.domain.region, r.isMarketing ? 'marketing' : 'transactional'));
      const job = await queue.getJob(r.id).catch(() => undefined);
      const state = await queue.getJobState(r.id).catch((err: Error) => `error:${err.message}`);
      const leaseS = r.sendLeaseUntil ? ((r.sendLeaseUntil.getTime() - now) / 1000).toFixed(0) : '-';
      const callS = r.sesCallStartedAt ? ((now - r.sesCallStartedAt.getTime()) / 1000).toFixed(0) : '-';
      const failed = job?.failedReason ? ` failed_reason=${JSON.stringify(job.failedReason.slice(0, 80))}` : '';
      const group = r.sendJobId
        ? ` group=${r.sendJobId}:${await queue.getJobState(r.sendJobId).catch((err: Error) => `error:${err.message}`)}`
        : '';
      return `lost ${r.id} ${r.latestStatus} marketing=${r.isMarketing} attempts=${r.sendAttempts} lease_in_s=${leaseS} call_started_s_ago=${callS} job=${state} job_attempts=${job?.attemptsMade ?? '-'} delay_until_s=${job ? ((job.timestamp + (job.delay ?? 0) - now) / 1000).toFixed(0) : '-'}${failed}${group}`;
    }),
  );
  const maintenance = stack.queues.get(queueNames.maintenance);
  const schedulers = await maintenance.getJobSchedulers().catch(() => []);
  const sweeper = schedulers.find((s) => s.key === 'sweep-unsent-emails');
  const counts = await maintenance.getJobCounts().catch(() => ({}));
  lines.push(
    `sweeper_scheduler next_in_s=${sweeper?.next ? ((sweeper.next - now) / 1000).toFixed(0) : 'none'} maintenance_jobs=${JSON.stringify(counts)}`,
  );
  return lines;
}

it(`a ${BURST}-email burst and a ${CAMPAIGN}-recipient campaign through 2 APIs and 3 workers survive three failovers`, async () => {
  const from = `Scale <hello@${stack.team.domain.name}>`;
  await stack.startApi();
  // The API's URL is known once it listens (it binds port 0 and reports it).
  const apis = [stack.apiUrl];
  apis.push(await stack.addApi());
  const workers: ChildProcess[] = [];
  for (let i = 0; i < 3; i++) workers.push(await stack.startWorker());
  await addWorkers(stack, 0, 3);

  const prefix = stack.prefix;
  const sendQueue = queueNames.send(stack.team.domain.region, 'transactional');
  const sendSlot = await slotOf(`${prefix}:{${sendQueue}}:wait`);
  const sendMaster = (await cluster.ownerOf(sendSlot))!;
  // The keys of the last part of the burst all live on one other master (with its replica).
  const topology = await cluster.topology();
  const idemMaster = topology.find((n) => n.master && n.port !== sendMaster.port && topology.some((r) => r.masterId === n.id))!;
  const onIdemMaster: string[] = [];
  for (let i = 0; onIdemMaster.length < Math.ceil(BURST / BATCH / 10); i++) {
    const key = `late-${i}`;
    const owner = await cluster.ownerOf(await slotOf(`${prefix}:idem:{${stack.team.id}:${key}}`));
    if (owner?.port === idemMaster.port) onIdemMaster.push(key);
  }
  const early = Array.from({ length: BURST / BATCH - onIdemMaster.length }, (_, i) => batch(`early-${i}`, BATCH, from));
  const late = onIdemMaster.map((key) => batch(key, BATCH, from));
  const mismatches: string[] = [];

  // The campaign, then the burst.
  const bookId = await createBook(stack, CAMPAIGN);
  const campaign = await api<{ id: string }>(stack, 'POST', '/api/v1/campaigns', {
    name: 'Scale',
    from: `News <news@${stack.team.domain.name}>`,
    subject: 'Hello {{firstName}}',
    contactBookId: bookId,
    html: '<p>Hi {{firstName,fallback=there}}</p><p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p>',
    sendNow: true,
    batchSize: 5000,
  });
  const t0 = Date.now();
  const earlyBurst = (async () => {
    await send(apis, early, 4, mismatches);
    // Every tenth batch again, same key and body: the same ids.
    await send(
      apis,
      early.filter((_, i) => i % 10 === 0),
      4,
      mismatches,
    );
  })();
  const failed = earlyBurst.catch((err: Error) => err);

  // 1. Lossless: the replica of the send queue's master takes over.
  await waitFor(async () => stack.ses.messages.length >= Math.min(2000, BURST / 5), 300_000, 'the burst at SES');
  const sendReplica = topology.find((n) => n.masterId === sendMaster.id)!;
  const f1At = Date.now();
  expect(await cluster.cli(sendReplica.port, 'cluster', 'failover')).toBe('OK');
  const f1 = await waitForNewOwner(sendSlot, sendMaster.port, f1At);
  const atSesF1 = stack.ses.messages.length;

  // 2. A crash of the new master: its replica (the old master) is promoted.
  await waitFor(async () => stack.ses.messages.length >= atSesF1 + Math.min(2000, BURST / 5), 300_000, 'more of the burst at SES');
  const f2At = Date.now();
  await cluster.kill(f1.node.port);
  const f2 = await waitForNewOwner(sendSlot, f1.node.port, f2At);
  const atSesF2 = stack.ses.messages.length;

  // 3. The early burst answered: half the late batches are sent; then all of them are sent again
  // and again (retries of the first half, first sends and retries of the second), over both APIs,
  // from before their keys' master is killed until a second after its replica took over.
  const burstError = await failed;
  if (burstError) throw burstError;
  await send(apis, late.slice(0, late.length / 2), 4, mismatches);
  let healed = false;
  let rounds = 0;
  const retried = (async () => {
    do {
      await send(apis, late, 4, mismatches);
      rounds++;
    } while (!healed);
  })();
  await sleep(500);
  const idemSlot = await slotOf(`${prefix}:idem:{${stack.team.id}:${late[0].key}}`);
  const f3At = Date.now();
  await cluster.kill(idemMaster.port);
  const f3 = await waitForNewOwner(idemSlot, idemMaster.port, f3At);
  await sleep(1000);
  healed = true;
  await retried;
  const lastAnswer = Date.now();

  // Every email SENT, however long this machine takes to send the backlog. An email whose job a
  // failover lost waits out its lease, then the next sweep sends it again, in one SES call at most
  // SES_TIMEOUT_MS long: a stretch longer than that with no email (nor the campaign) becoming SENT
  // means one is stuck, and the wait ends there.
  const ids = new Set([...early, ...late].flatMap((r) => r.ids ?? []));
  const campaignEmails = (await stack.db.email.findMany({ where: { campaignId: campaign.id }, select: { id: true } })).map((e) => e.id);
  for (const id of campaignEmails) ids.add(id);
  const stuckAfterMs = LEASE_MS + SWEEP_MS + SES_TIMEOUT_MS;
  const unsentAtLastAnswer = ids.size - (await stack.db.email.count({ where: { teamId: stack.team.id, latestStatus: 'SENT' } }));
  let allSentMs = -1;
  let progress = '';
  let progressAt = Date.now();
  let stuck = false;
  await waitFor(
    async () => {
      const campaignDone = (await api<{ status: string }>(stack, 'GET', `/api/v1/campaigns/${campaign.id}`)).status === 'SENT';
      const sent = await stack.db.email.count({ where: { teamId: stack.team.id, latestStatus: 'SENT' } });
      const now = Date.now();
      if (campaignDone && sent >= BURST + CAMPAIGN) allSentMs = now - lastAnswer;
      if (`${sent}:${campaignDone}` !== progress) [progress, progressAt] = [`${sent}:${campaignDone}`, now];
      stuck = now - progressAt > stuckAfterMs;
      return allSentMs >= 0 || stuck;
    },
    // Only a guard against a hang the progress check misses: jest's timeout for the test.
    1_200_000,
    'every email SENT',
  ).catch(() => undefined);
  await sleep(LEASE_MS + 1000); // a duplicate from an expired lease would show up by now

  const perEmail = stack.sesCountsByEmailId();
  const lost = [...ids].filter((id) => !perEmail.has(id)).length;
  const duplicates = [...perEmail.values()].filter((n) => n > 1).length;
  // For a failing run: when the copies of a duplicate reached SES, and the SES timeouts the workers logged.
  const copies = new Map<string, number[]>();
  for (const m of stack.ses.messages) {
    const id = emailIdOf(m.raw) ?? '';
    if ((perEmail.get(id) ?? 0) > 1) copies.set(id, [...(copies.get(id) ?? []), m.at - t0]);
  }
  const sesTimeouts = readdirSync(logDir)
    .filter((f) => f.startsWith('scale-failover-worker'))
    .reduce(
      (n, f) => n + (readFileSync(path.join(logDir, f), 'utf8').match(/exceeded the configured \d+ ms requestTimeout/g) ?? []).length,
      0,
    );
  const stray = [...perEmail.keys()].filter((id) => !ids.has(id)).length;
  const lostSample = await describeLost([...ids].filter((id) => !perEmail.has(id)).slice(0, 12));
  const emailRows = await stack.db.email.count({ where: { teamId: stack.team.id } });
  const alive = workers.every((w) => w.exitCode === null && w.signalCode === null);
  // A queue outside its hash tag fails every BullMQ call on a cluster (CROSSSLOT) in a tight loop.
  const crossSlot = readdirSync(logDir)
    .filter((f) => f.startsWith('scale-failover-'))
    .filter((f) => readFileSync(path.join(logDir, f), 'utf8').includes('CROSSSLOT'));
  const answers = Object.fromEntries([...statuses].map(([s, n]) => [String(s), n]));
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  recordFigures('failover-under-load', [
    `burst=${BURST} emails in ${early.length + late.length} batches (+${early.filter((_, i) => i % 10 === 0).length} repeated, ${late.length / 2} retried across the kill) campaign=${CAMPAIGN}`,
    `cluster_failover: slot ${sendSlot} on new master after ${seconds(f1.ms)} s, ses_messages_at=${atSesF1}`,
    `kill_send_master: slot ${sendSlot} promoted after ${seconds(f2.ms)} s, ses_messages_at=${atSesF2}`,
    `kill_idempotency_master: slot ${idemSlot} promoted after ${seconds(f3.ms)} s, ${rounds} rounds of the ${late.length} late batches sent meanwhile`,
    `burst_answered_after=${seconds(lastAnswer - t0)} s unsent_at_last_answer=${unsentAtLastAnswer} all_sent_after_last_answer=${allSentMs < 0 ? 'never' : `${seconds(allSentMs)} s`}${stuck ? ` (none SENT for ${seconds(stuckAfterMs)} s: stuck at ${progress})` : ''}`,
    `api_answers=${JSON.stringify(answers)} id_mismatches_on_retry=${mismatches.length}`,
    `faults_at_ms=${[f1At, f2At, f3At].map((t) => t - t0).join(',')} duplicate_copies_at_ms=${JSON.stringify([...copies.values()].slice(0, 5))} ses_timeouts_logged=${sesTimeouts}`,
    ...lostSample,
    `emails=${ids.size} email_rows=${emailRows} ses_messages=${stack.ses.messages.length} lost=${lost} duplicates=${duplicates} stray=${stray} processes_alive=${alive} logs_with_crossslot=${crossSlot.length}`,
  ]);

  expect([...statuses.keys()].filter((s) => !ALLOWED.has(s as number))).toEqual([]);
  expect(mismatches).toEqual([]);
  expect(ids.size).toBe(BURST + CAMPAIGN);
  expect(emailRows).toBe(BURST + CAMPAIGN);
  expect({ lost, duplicates, stray }).toEqual({ lost: 0, duplicates: 0, stray: 0 });
  expect(stack.ses.messages.filter((m) => !emailIdOf(m.raw))).toEqual([]);
  expect({ stuck, allSent: allSentMs >= 0 }).toEqual({ stuck: false, allSent: true });
  expect(alive).toBe(true);
  expect(crossSlot).toEqual([]);
}, 1_200_000);
