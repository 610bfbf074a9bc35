// Scenarios on the send path: idempotency under concurrency, Redis losing its keys, SES faults,
// and the worker killed mid-burst. Each one counts, per email, how many messages the fake SES
// accepted (by the X-Usesend-Email-ID header of the raw MIME): 0 is a loss, more than 1 a duplicate.
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { classifyDuplicates, killWorker, type Kill } from './duplicates';
import { sizes } from './sizes';
import { describeLost, emailIdOf, lossAndDuplicates, sleep, startStack, waitFor, type ScenarioResult } from './stack';

/** 5. Fifty concurrent sends with one Idempotency-Key: one email row, one SES message. */
export async function idempotencyUnderConcurrency(): Promise<ScenarioResult> {
  const stack = await startStack('s5');
  try {
    await stack.startApi();
    await stack.startWorker();
    const body = JSON.stringify({
      from: `Shop <orders@${stack.team.domain.name}>`,
      to: 'one@example.org',
      subject: 'Once',
      text: 'only once',
    });
    const headers = { ...stack.team.auth, 'Content-Type': 'application/json', 'Idempotency-Key': 'faults-once' };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${stack.apiUrl}/api/v1/emails`, { method: 'POST', headers, body }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { emailId?: string; error?: { code: string } },
        })),
      ),
    );
    const ok = answers.filter((a) => a.status === 200);
    const inProgress = answers.filter((a) => a.status === 409 && a.body.error?.code === 'NOT_UNIQUE');
    const others = answers.filter((a) => !ok.includes(a) && !inProgress.includes(a));
    const other = others.length;
    // What the other answers were, by status and code: a bare count cannot tell a rate limit from a crash.
    const otherKinds = [...new Set(others.map((a) => `${a.status}:${a.body.error?.code ?? '-'}`))].join(',');
    const ids = new Set(ok.map((a) => a.body.emailId));
    // A retry after the first one finished gets the same id.
    const retry = await fetch(`${stack.apiUrl}/api/v1/emails`, { method: 'POST', headers, body }).then(
      (r) => r.json() as Promise<{ emailId?: string }>,
    );
    ids.add(retry.emailId);
    const rows = await stack.db.email.count();
    await stack.waitUntilDelivered(
      [...ids].filter((x): x is string => !!x),
      20_000,
    );
    await sleep(1500); // time for a duplicate to show up, if there were one
    const sesMessages = stack.ses.messages.length;
    const pass = rows === 1 && ids.size === 1 && sesMessages === 1 && other === 0;
    return {
      pass,
      figures: `requests=50 ok=${ok.length} in_progress_409=${inProgress.length} other=${other}${other ? ` (${otherKinds})` : ''} distinct_ids=${ids.size} email_rows=${rows} ses_messages=${sesMessages}`,
    };
  } finally {
    await stack.close();
  }
}

/** 2. The test prefix's Redis keys deleted mid-run, with queued and scheduled emails. */
export async function redisFlushMidRun(): Promise<ScenarioResult> {
  const stack = await startStack('s2');
  try {
    const worker = await stack.startWorker();
    const queued = await stack.createEmails(2000);
    const dueAt = Date.now() + 8_000;
    const scheduled = await stack.createEmails(300, { scheduledAt: new Date(dueAt) });
    // Flush once sending is under way, while most of the queue and every scheduled job are in Redis.
    await waitFor(async () => stack.ses.messages.length >= 300, 60_000, 'sending to start');
    const atFlush = stack.ses.messages.length;
    // Every master's keys under the prefix, on one Redis or a cluster.
    const keys = await deleteRedisPrefix(stack.redis, stack.prefix);
    const ids = [...queued, ...scheduled];
    const done = await stack.waitUntilDelivered(ids, 240_000);
    await sleep(2000);
    const { lost, duplicates } = lossAndDuplicates(ids, stack.sesCountsByEmailId());
    const early = countEarly(stack, new Set(scheduled), dueAt);
    const pass = done && lost === 0 && duplicates === 0 && early === 0 && worker.exitCode === null;
    return {
      pass,
      figures: `queued=${queued.length} scheduled=${scheduled.length} sent_before_flush=${atFlush} keys_deleted=${keys} lost=${lost} duplicates=${duplicates} scheduled_sent_early=${early}${pass ? '' : await describeLost(stack, ids)}`,
    };
  } finally {
    await stack.close();
  }
}

/** Scheduled emails that reached SES before they were due. */
function countEarly(stack: Awaited<ReturnType<typeof startStack>>, scheduled: Set<string>, dueAt: number): number {
  return stack.ses.messages.filter((m) => scheduled.has(emailIdOf(m.raw) ?? '') && m.at < dueAt - 50).length;
}

/**
 * 3. 30% of SES calls throttled, 5% timed out. Half the timeouts are "never accepted" (SES
 * answers an error after the client gave up), half "accepted but answered late" (SES kept the
 * message; the client saw a timeout): only the latter may legitimately duplicate.
 */
export async function sesFaults(): Promise<ScenarioResult> {
  const stack = await startStack('s3');
  try {
    const acceptedLate = new Map<string, number>();
    let throttled = 0;
    let timeoutsLost = 0;
    let timeoutsLate = 0;
    stack.ses.setRule((req) => {
      const r = Math.random();
      if (r < 0.3) {
        throttled++;
        return { kind: 'throttle' };
      }
      if (r < 0.35) {
        if (Math.random() < 0.5) {
          timeoutsLost++;
          return { kind: 'timeout', delayMs: 4000, accept: false };
        }
        timeoutsLate++;
        const id = emailIdOf(req.raw);
        if (id) acceptedLate.set(id, (acceptedLate.get(id) ?? 0) + 1);
        return { kind: 'timeout', delayMs: 4000, accept: true };
      }
      return undefined;
    });
    await stack.startWorker();
    const ids = await stack.createEmails(sizes.sesFaultEmails);
    const done = await stack.waitUntilDelivered(ids, 240_000);
    // Everything at SES; wait for the worker to record the last answers.
    await waitFor(
      async () => (await stack.db.email.count({ where: { latestStatus: { in: ['QUEUED', 'SCHEDULED'] } } })) === 0,
      60_000,
      'statuses to settle',
    ).catch(() => undefined);
    await sleep(1500);
    const counts = stack.sesCountsByEmailId();
    const { lost } = lossAndDuplicates(ids, counts);
    let explained = 0;
    let unexplained = 0;
    for (const id of ids) {
      const extra = (counts.get(id) ?? 0) - 1;
      if (extra <= 0) continue;
      const allowed = acceptedLate.get(id) ?? 0;
      explained += Math.min(extra, allowed);
      unexplained += Math.max(0, extra - allowed);
    }
    const accepted = new Set(stack.ses.messages.map((m) => m.messageId));
    const sent = await stack.db.email.findMany({
      where: { latestStatus: { notIn: ['QUEUED', 'SCHEDULED', 'FAILED'] } },
      select: { id: true, sesEmailId: true },
    });
    const sentWithoutSes = sent.filter((e) => !e.sesEmailId || !accepted.has(e.sesEmailId)).length;
    const failed = await stack.db.email.count({ where: { latestStatus: 'FAILED' } });
    // Each fault must have happened, accepted-late timeouts the rarest (2.5 % of calls), or the size proves nothing.
    const everyFault = throttled > 0 && timeoutsLost > 0 && timeoutsLate > 0;
    const pass = done && everyFault && lost === 0 && unexplained === 0 && sentWithoutSes === 0 && failed === 0;
    return {
      pass,
      figures:
        `emails=${ids.length} ses_calls=${stack.ses.sendCalls} throttled=${throttled} timeouts_never_accepted=${timeoutsLost} timeouts_accepted_late=${timeoutsLate} ` +
        `lost=${lost} failed=${failed} sent_without_ses_message=${sentWithoutSes} duplicates_after_accepted_late_timeout=${explained} other_duplicates=${unexplained}`,
    };
  } finally {
    await stack.close();
  }
}

/**
 * 1'. The worker SIGKILLed five times during a burst of queued transactional emails (scenario 1
 * does the same to a campaign). Duplicates are classified as in duplicates.ts.
 */
export async function workerKilledMidBurst(total = sizes.burstEmails): Promise<ScenarioResult> {
  const stack = await startStack('s1');
  try {
    const ids = await stack.createEmails(total);
    await stack.startWorker();
    const kills: Kill[] = [];
    let previous = 0;
    for (let k = 0; k < 5; k++) {
      const target = previous + Math.max(200, Math.floor(total / 8));
      await waitFor(async () => stack.ses.messages.length >= target, 180_000, 'the worker to make progress');
      kills.push(await killWorker(stack));
      previous = stack.ses.messages.length;
      await stack.startWorker();
    }
    const done = await stack.waitUntilDelivered(ids, 600_000);
    // Nothing left that could still reach SES (rather than a lease's length of waiting for a late duplicate).
    const settled = await stack.waitUntilSettled({ ids }, 120_000);
    const counts = stack.sesCountsByEmailId();
    const { lost } = lossAndDuplicates(ids, counts);
    const copies = new Map<string, number[]>();
    for (const m of stack.ses.messages) {
      const id = emailIdOf(m.raw);
      if (id) copies.set(id, [...(copies.get(id) ?? []), m.at]);
    }
    const { inFlight, other, widestGapMs, sample } = classifyDuplicates(copies.values(), kills);
    const pass = done && settled && kills.length === 5 && lost === 0 && other === 0;
    return {
      pass,
      figures: `emails=${total} kills=${kills.length} settled=${settled} ses_messages=${stack.ses.messages.length} lost=${lost} duplicates_accepted_by_ses_before_kill=${inFlight} (widest_ms_from_ses_accept_to_kill=${widestGapMs}) other_duplicates=${other}${sample}`,
    };
  } finally {
    await stack.close();
  }
}
