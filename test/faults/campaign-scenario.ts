// Scenario 1: a campaign (20,000 recipients at full size, fewer in CI: sizes.ts), created through
// the API, whose worker is SIGKILLed five times; the first kill lands while the engine is still
// writing the campaign's emails, the others mid-sending, without waiting for SES to go quiet. Every
// recipient must receive exactly one message, the campaign must end SENT with its counters right.
// Scenario 10: the same with SES's Send events published through (played) SNS, and SES answering
// 50 ms after it took each message, so every kill leaves emails SES has and the database does not
// know about ("in doubt"). Campaign mail waits for the Send event: no duplicate at all.
import { queueNames } from '@mailrail/platform/queue/queues';
import { emailIdOf, startStack, waitFor, type ScenarioResult, type Stack } from './stack';
import { classifyDuplicates, killWorker, type Kill } from './duplicates';
import { publishSendEvents, snsForStack, type SendEventPublisher } from './ses-send-events';
import { sizes } from './sizes';

const UNSUBSCRIBE_HTML = '<p>Hi {{firstName,fallback=there}}</p><p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p>';
const BULK_LIMIT = 10_000; // MAX_BULK_CONTACTS of the contacts API

/** Messages a restarted worker sends before it is killed again: 5 x SEND_CONCURRENCY, the lane full. */
const SENT_BY_EACH_LIFE = 100;
const IN_DOUBT_WAIT_SECONDS = 60; // scenario 10: well above the time a Send event takes to reach the API

export const campaignWorkerKilled = (total = sizes.campaignRecipients) => campaignWithKills('s1', total, false);

export const campaignWorkerKilledWithSendEvents = (total = sizes.campaignRecipients) => campaignWithKills('s10', total, true);

async function campaignWithKills(name: string, total: number, sendEvents: boolean): Promise<ScenarioResult> {
  const sns = sendEvents ? await snsForStack() : null;
  const stack = await startStack(
    name,
    { CAMPAIGN_CHUNK_SIZE: '500', ...(sns ? { ...sns.env, SES_IN_DOUBT_WAIT_SECONDS: String(IN_DOUBT_WAIT_SECONDS) } : {}) },
    { apiImports: sns?.apiImports },
  );
  let publisher: SendEventPublisher | null = null;
  let backlog: { max(): number; stop(): void } | null = null;
  try {
    if (sns) {
      stack.ses.latencyMs = 50;
      stack.ses.acceptBeforeLatency = true;
      publisher = publishSendEvents(stack, sns.signer);
      backlog = watchSesEventBacklog(stack);
    }
    await stack.startApi();
    const bookId = await createBook(stack, total);
    const campaign = await api<{ id: string }>(stack, 'POST', '/api/v1/campaigns', {
      name: 'Faults',
      from: `News <news@${stack.team.domain.name}>`,
      subject: 'Hello {{firstName}}',
      contactBookId: bookId,
      html: UNSUBSCRIBE_HTML,
      sendNow: true,
      batchSize: 5000,
    });
    const emailsCreated = () => stack.db.email.count({ where: { campaignId: campaign.id } });

    const kills: Kill[] = [];
    const atSesAfterEachKill: number[] = [];
    let inDoubtAtKills = 0;
    const kill = async () => {
      let claimed: string[] = [];
      const k = await killWorker(stack, async () => {
        if (sns) claimed = await claimedUnsent(stack, campaign.id);
      });
      kills.push(k);
      atSesAfterEachKill.push(stack.ses.messages.length);
      inDoubtAtKills += acceptedBy(stack, claimed, k.settledAt);
    };
    // Kill 1: while the engine writes the windows (emails exist for some recipients only).
    await stack.startWorker();
    await waitFor(async () => (await emailsCreated()) >= 1000, 120_000, 'the campaign to start writing emails');
    await kill();
    const createdAtFirstKill = await emailsCreated();
    // Kills 2 to 5: mid-sending, spread over the run, each after the restarted worker has sent a
    // few times its concurrency itself (a small campaign can be past 1/5.5 at the first kill).
    for (let k = 1; k < 5; k++) {
      await stack.startWorker();
      const target = Math.max(Math.floor((total * k) / 5.5), stack.ses.messages.length + SENT_BY_EACH_LIFE);
      await waitFor(async () => stack.ses.messages.length >= target, 240_000, `${target} messages at SES`);
      await kill();
    }
    const atSesAfterKills = stack.ses.messages.length;
    await stack.startWorker();

    const ended = await waitFor(
      async () => {
        const c = await api<{ status: string }>(stack, 'GET', `/api/v1/campaigns/${campaign.id}`);
        return c.status === 'SENT';
      },
      600_000,
      'the campaign to end SENT',
    ).then(
      () => true,
      () => false,
    );
    // Nothing left that could still reach SES (rather than a lease's length of waiting for a late duplicate).
    const settled = await stack.waitUntilSettled({ campaignId: campaign.id }, 120_000);
    const drained = publisher ? await publisher.drain(60_000) : true;

    const final = await api<{ status: string; total: number; sent: number }>(stack, 'GET', `/api/v1/campaigns/${campaign.id}`);
    const perRecipient = new Map<string, number[]>();
    for (const m of stack.ses.messages) {
      const to = m.destination.to[0];
      perRecipient.set(to, [...(perRecipient.get(to) ?? []), m.at]);
    }
    const lost = total - perRecipient.size;
    const { inFlight, other, widestGapMs, sample } = classifyDuplicates(perRecipient.values(), kills);
    const emailRows = await emailsCreated();
    const recipientsSent = await stack.db.campaignEmail.count({ where: { campaignId: campaign.id, status: 'SENT' } });
    const sentEvents = await stack.db.emailEvent.count({ where: { status: 'SENT', email: { campaignId: campaign.id } } });
    // A run whose kills left nothing in doubt would prove nothing about the in-doubt wait.
    const strict = sns ? inFlight === 0 && drained && sentEvents === total && inDoubtAtKills > 0 : true;
    const pass =
      strict &&
      ended &&
      settled &&
      kills.length === 5 &&
      createdAtFirstKill < total &&
      atSesAfterKills < total &&
      lost === 0 &&
      other === 0 &&
      emailRows === total &&
      recipientsSent === total &&
      final.total === total &&
      final.sent === total;
    return {
      pass,
      figures:
        `recipients=${total} kills=${kills.length} emails_written_at_first_kill=${createdAtFirstKill} at_ses_after_each_kill=${atSesAfterEachKill.join(',')} ` +
        `status=${final.status} settled=${settled} total=${final.total} sent=${final.sent} email_rows=${emailRows} recipients_sent=${recipientsSent} ses_messages=${stack.ses.messages.length} ` +
        (publisher
          ? `send_events_delivered=${publisher.delivered()} send_event_posts_failed=${publisher.failedPosts()} max_ses_event_backlog=${backlog?.max()} ` +
            `in_doubt_accepted_by_ses_at_kills=${inDoubtAtKills} sent_events=${sentEvents} `
          : '') +
        `lost=${lost} duplicates_accepted_by_ses_before_kill=${inFlight} (widest_ms_from_ses_accept_to_kill=${widestGapMs}) other_duplicates=${other}${sample}`,
    };
  } finally {
    publisher?.stop();
    backlog?.stop();
    await stack.close();
  }
}

/** The most SES event jobs seen waiting (or delayed for a retry) at once: how far event processing lags. */
function watchSesEventBacklog(stack: Stack): { max(): number; stop(): void } {
  let max = 0;
  const queue = stack.queues.get(queueNames.sesEvents);
  const timer = setInterval(() => {
    void queue.getJobCounts('waiting', 'delayed', 'prioritized').then(
      (c) => (max = Math.max(max, (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0))),
      () => undefined,
    );
  }, 1000);
  return { max: () => max, stop: () => clearInterval(timer) };
}

/** Emails of the campaign claimed by a worker (SES call started) and not recorded as sent. */
async function claimedUnsent(stack: Stack, campaignId: string): Promise<string[]> {
  const rows = await stack.db.email.findMany({
    where: { campaignId, sesEmailId: null, sesCallStartedAt: { not: null } },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/**
 * How many of the emails a killed worker left claimed and unsent SES had accepted by `until`: each
 * was in doubt, and was sent twice before in-doubt handling. A run where this stays 0 proves little.
 */
function acceptedBy(stack: Stack, emailIds: string[], until: number): number {
  const ids = new Set(emailIds);
  const accepted = new Set(stack.ses.messages.filter((m) => m.at <= until).map((m) => emailIdOf(m.raw)));
  return [...ids].filter((id) => accepted.has(id)).length;
}

/** A contact book of `n` subscribed contacts, filled through the bulk contacts API. */
export async function createBook(stack: Stack, n: number): Promise<string> {
  const book = await api<{ id: string }>(stack, 'POST', '/api/v1/contactBooks', { name: 'Faults audience' });
  for (let i = 0; i < n; i += BULK_LIMIT) {
    const contacts = Array.from({ length: Math.min(BULK_LIMIT, n - i) }, (_, j) => ({
      email: `c${i + j}@people.example.net`,
      firstName: `C${i + j}`,
    }));
    await api(stack, 'POST', `/api/v1/contactBooks/${book.id}/contacts/bulk`, contacts);
  }
  return book.id;
}

export async function api<T = unknown>(stack: Stack, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { ...stack.team.auth, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}
