// Noisy neighbour on the send queue and on campaign previews (issue 40): team A has a backlog of
// thousands of emails on the shared send queue (the SES rate lets them out over tens of seconds)
// and renders 2 MB campaign previews in loops at its own limit, while team B sends and reads.
// Every B email must reach SES without waiting behind A's backlog: counted in A's messages that
// reached SES between B's answer and B's message, not in seconds, so a slow machine cannot fail it.
// B's answers and /ready must all succeed, and B's p90 stay within scenario 11's bound of its own
// baseline (a ratio within the run, as in scenarios 11 and 12). A's preview clients run on a
// thread of their own (load-off-thread.ts): when this thread also built A's 1.8 MB bodies and
// parsed its 4 MB answers, B's p90 counted this runner's event loop (85-135 ms against about 60
// on 2026-12-06), not the API (19-34 ms once moved; docs/faults.md, scenario 13).
import { queueNames } from '@mailrail/platform/queue/queues';
import { call } from './api-scenarios';
import { postLoopsOffThread } from './load-off-thread';
import { neighbourTraffic, p90, p90Bound, tally } from './neighbour-traffic';
import { emailIdOf, startStack, waitFor, type ScenarioResult } from './stack';

const PHASE_MS = 8_000;
const A_BACKLOG = 4_000;
const SES_RATE = 100;
const SEND_CONCURRENCY = 2;
const PREVIEW_PER_TEAM = 2;
// B is a light sender (about 10 emails a second), as most teams are next to a bulk sender: its
// places stay low, so the bound below is far under what first in, first out would make it wait.
const B_PAUSE_MS = 50;
// A B email with place n in its minute (its job's priority, fair-priority.ts) waits at most for
// the jobs already running (3 per SES call in flight, send-worker.ts, plus the one that ties with
// it), each a group of at most 16 emails, and for A's emails with a lower place: fewer than n.
// First in, first out it waited for all of A's backlog still queued when it was sent (thousands).
const RUNNING_JOBS = 3 * SEND_CONCURRENCY + 1;
const maxAheadOf = (place: number) => RUNNING_JOBS * 16 + place - 1;

/** A body just under the preview cap (CAMPAIGN_PREVIEW_MAX_MB, 2): paragraphs for html-to-text to walk. */
const bigHtml = () => `<div>${'<p>Lorem <b>ipsum</b> dolor <a href="https://example.com/x">sit</a> amet.</p>'.repeat(24_000)}</div>`;

export async function noisySendsAndPreviews(): Promise<ScenarioResult> {
  const stack = await startStack('noisy-sends', {
    SES_RATE_LIMIT: String(SES_RATE),
    SEND_CONCURRENCY: String(SEND_CONCURRENCY),
    PREVIEW_CONCURRENCY_PER_TEAM: String(PREVIEW_PER_TEAM),
  });
  try {
    await stack.startApi();
    await stack.startWorker();
    const a = stack.team;
    const b = await stack.addTeam('Neighbour', 'neighbour.example.com');
    await call(stack, b, 'post', '/contactBooks', { name: 'Mine' });
    const book = (await call(stack, a, 'post', '/contactBooks', { name: 'News' })).json!.id as string;
    const campaign = await call(stack, a, 'post', '/campaigns', {
      name: 'Big',
      from: `News <news@${a.domain.name}>`,
      subject: 'Hello',
      contactBookId: book,
      html: '<p>Hi</p><p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p>',
    });
    const html = bigHtml();

    const baseline = await neighbourTraffic(stack, b, PHASE_MS, { pauseMs: B_PAUSE_MS });
    await waitFor(async () => stack.ses.messages.length >= baseline.latencies.length / 2, 30_000, "B's baseline emails at SES");

    // A: a backlog stored as the API stores a batch (one team, due now), and preview loops.
    const backlog = new Set(await stack.createEmails(A_BACKLOG));
    const aAtSes = () => stack.ses.messages.filter((m) => backlog.has(emailIdOf(m.raw) ?? '')).length;
    // A's preview clients run on a thread of their own: B's latencies are timed on this one.
    const previews = postLoopsOffThread({
      url: `${stack.apiUrl}/api/v1/campaigns/${campaign.json!.id as string}/preview`,
      headers: a.auth,
      body: JSON.stringify({ html }),
      loops: PREVIEW_PER_TEAM + 2,
      pauseAfterRefusalMs: 100,
    });
    // Each B email, with how many of A's messages had reached SES when B's send was answered.
    const bSent = new Map<string, number>();
    const loaded = await neighbourTraffic(stack, b, PHASE_MS, { onSent: (id) => bSent.set(id, aAtSes()), pauseMs: B_PAUSE_MS });
    const previewStatuses = await previews.stop();

    // Where each B email reached SES: A's messages ahead of it since B's answer.
    const delivered = await stack.waitUntilDelivered([...bSent.keys()], 60_000);
    const aBefore = new Map<string, number>();
    let aSoFar = 0;
    for (const m of stack.ses.messages) {
      const id = emailIdOf(m.raw) ?? '';
      if (backlog.has(id)) aSoFar++;
      else if (bSent.has(id) && !aBefore.has(id)) aBefore.set(id, aSoFar - bSent.get(id)!);
    }
    // Each B email against its own bound, from its job's place.
    const queue = stack.queues.get(queueNames.send(b.domain.region, 'transactional'));
    let overBound = 0;
    // B emails that first in, first out would have held behind more of A's backlog than the bound:
    // without them the run would prove nothing.
    let fifoOverBound = 0;
    let worstAhead = 0;
    let worstPlace = 0;
    for (const [id, n] of aBefore) {
      const place = (await queue.getJob(id))?.opts.priority ?? Number.MAX_SAFE_INTEGER;
      if (n > maxAheadOf(place)) overBound++;
      if (A_BACKLOG - bSent.get(id)! > maxAheadOf(place)) fifoOverBound++;
      if (n >= worstAhead) [worstAhead, worstPlace] = [n, place];
    }
    const aLeftAtBLast = A_BACKLOG - Math.max(0, ...[...aBefore].map(([id, n]) => n + bSent.get(id)!));
    const baseP90 = p90(baseline.latencies);
    const loadP90 = p90(loaded.latencies);
    const bound = p90Bound(baseP90);
    const pass =
      campaign.status === 200 &&
      delivered &&
      bSent.size > 0 &&
      aBefore.size === bSent.size &&
      overBound === 0 &&
      fifoOverBound > 0 &&
      // The backlog was still there when B's last email left: B did not just come after it.
      aLeftAtBLast > 0 &&
      previewStatuses.includes(200) &&
      previewStatuses.includes(429) &&
      baseline.failures.length + loaded.failures.length === 0 &&
      baseline.readyFailures + loaded.readyFailures === 0 &&
      loadP90 <= bound;
    return {
      pass,
      figures:
        `a_campaign=${campaign.status} a_backlog=${A_BACKLOG} ses_rate=${SES_RATE} a_previews=${tally(previewStatuses)} b_emails=${bSent.size} b_delivered=${delivered} ` +
        `b_worst_a_ahead=${worstAhead} (place ${worstPlace}, bound ${maxAheadOf(worstPlace)}) b_over_bound=${overBound} b_over_bound_if_fifo=${fifoOverBound} a_left_at_b_last=${aLeftAtBLast} ` +
        `b_baseline_requests=${baseline.latencies.length} b_baseline_p90_ms=${baseP90.toFixed(1)} ` +
        `b_loaded_requests=${loaded.latencies.length} b_loaded_p90_ms=${loadP90.toFixed(1)} b_p90_bound_ms=${bound.toFixed(1)} ` +
        `b_failures=${[...baseline.failures, ...loaded.failures].slice(0, 5).join(',') || 0} ready_failures=${baseline.readyFailures + loaded.readyFailures}`,
    };
  } finally {
    await stack.close();
  }
}
