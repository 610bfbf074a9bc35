import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { Logger } from '@mailrail/platform/log/logger';
import type { QueueFactory } from '@mailrail/platform/queue/queues';
import {
  enqueueSendJobs,
  insertEmailRows,
  insertEmailRowsUnlessSuppressed,
  prepareEmails,
  type CreatedEmail,
  type EmailDraft,
} from './create-emails';
import type { IdempotencyClaim } from './idempotency';
import { suppressionLookup, withSuppressions } from './suppression';

interface Entry {
  drafts: EmailDraft[];
  /** Stored with the emails when the call came with an Idempotency-Key. */
  claim?: IdempotencyClaim;
  resolve: (created: CreatedEmail[]) => void;
  reject: (err: unknown) => void;
}

export interface CommitterOptions {
  /** Most drafts written by one statement. */
  maxBatch: number;
  /** Statements in flight at once; requests arriving meanwhile wait and share the next one. */
  concurrency: number;
}

/**
 * Group commit for email creation. Each call's drafts join a pending list; a flush writes
 * everything pending with one statement (the suppression check and a multi-row INSERT, see
 * write) and one addBulk per queue, then answers every caller. A call's drafts are never split
 * across flushes, so a batch stays all-or-nothing; if a combined write fails, each call is
 * retried alone so one bad call cannot fail its neighbours. Under light load a flush starts on the
 * next tick (no added latency);
 * under load, flushes grow to fill the time the previous ones take: a flush leaves when a statement
 * slot frees, not on a window or a turn, which is why this is not the batching helper
 * (packages/platform/src/batching). It writes through `deps.sql`,
 * a node-postgres pool of its own in the API and the relay (createIntakeSql), which skips Prisma's
 * argument handling on the hottest statements of those processes.
 */
export function createEmailCommitter(
  deps: { sql: SqlExecutor; queues: QueueFactory; log: Logger; now: () => Date },
  opts: CommitterOptions,
) {
  const pending: Entry[] = [];
  let pendingDrafts = 0;
  let inFlight = 0;
  let scheduled = false;
  const concurrency = Math.max(1, opts.concurrency);
  const maxBatch = Math.max(1, opts.maxBatch);
  // drain()'s callers, answered once nothing is pending, scheduled or in flight.
  let idleWaiters: (() => void)[] = [];

  function answerIfIdle() {
    if (pending.length || inFlight || scheduled || !idleWaiters.length) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    waiters.forEach((w) => w());
  }

  /** The drafts with their ids and statuses, each entry's share of them, and the idempotency records. */
  function prepare(entries: Entry[], drafts: EmailDraft[], now: Date) {
    const prepared = prepareEmails(drafts, now);
    const out: CreatedEmail[][] = [];
    let k = 0;
    for (const e of entries) {
      out.push(prepared.slice(k, k + e.drafts.length).map((p) => p.created));
      k += e.drafts.length;
    }
    const claims = entries.flatMap((e, i) => (e.claim ? [{ ...e.claim, emailIds: out[i].map((c) => c.id) }] : []));
    return { prepared, out, claims };
  }

  async function write(entries: Entry[]): Promise<CreatedEmail[][]> {
    const now = deps.now();
    const drafts = entries.flatMap((e) => e.drafts);
    // One statement when no recipient is suppressed, the common case. Otherwise that statement
    // writes nothing and names the suppressed recipients; the drafts, with useSend's rule applied
    // (withSuppressions keeps their number and order), are written by a second one.
    let attempt = prepare(entries, drafts, now);
    const suppressed = await insertEmailRowsUnlessSuppressed(deps.sql, attempt.prepared, now, attempt.claims, suppressionLookup(drafts));
    if (suppressed.length) {
      attempt = prepare(entries, withSuppressions(drafts, suppressed), now);
      await insertEmailRows(deps.sql, attempt.prepared, now, attempt.claims);
    }
    await enqueueSendJobs(deps, attempt.prepared, now);
    return attempt.out;
  }

  async function flush(entries: Entry[]) {
    try {
      const results = await write(entries);
      entries.forEach((e, i) => e.resolve(results[i]));
    } catch (err) {
      if (entries.length === 1) return entries[0].reject(err);
      deps.log.warn({ err, calls: entries.length }, 'group commit failed; writing each call alone');
      await Promise.all(
        entries.map((e) =>
          write([e]).then(
            (r) => e.resolve(r[0]),
            (e2) => e.reject(e2),
          ),
        ),
      );
    }
  }

  function takeBatch(): Entry[] {
    const taken: Entry[] = [];
    let n = 0;
    while (pending.length && (taken.length === 0 || n + pending[0].drafts.length <= maxBatch)) {
      const e = pending.shift()!;
      n += e.drafts.length;
      taken.push(e);
    }
    pendingDrafts -= n;
    return taken;
  }

  function pump() {
    scheduled = false;
    while (inFlight < concurrency && pending.length) {
      const batch = takeBatch();
      inFlight++;
      void flush(batch).finally(() => {
        inFlight--;
        if (pending.length && !scheduled) schedule();
        answerIfIdle();
      });
    }
    answerIfIdle();
  }

  function schedule() {
    scheduled = true;
    // setImmediate lets every request already read from the sockets join this flush.
    setImmediate(pump);
  }

  return {
    /** Resolves once the drafts are committed (and enqueued), in order. */
    submit(drafts: EmailDraft[], claim?: IdempotencyClaim): Promise<CreatedEmail[]> {
      if (drafts.length === 0) return Promise.resolve([]);
      return new Promise<CreatedEmail[]>((resolve, reject) => {
        pending.push({ drafts, claim, resolve, reject });
        pendingDrafts += drafts.length;
        if (!scheduled && inFlight < concurrency) schedule();
      });
    },
    /**
     * Resolves once every call submitted so far is written and answered (the pending ones are
     * flushed, those in flight awaited). Shutdown awaits it before closing `deps.sql`'s pool.
     */
    drain(): Promise<void> {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        answerIfIdle();
      });
    },
    stats: () => ({ pending: pending.length, pendingDrafts, inFlight }),
  };
}

export type EmailCommitter = ReturnType<typeof createEmailCommitter>;
