import DataLoader from 'dataloader';

// Micro-batching for the hot paths: requests that arrive close together share one call (a
// statement, a Redis script, an addBulk), and each caller is answered with its own result, as if
// it had made the call alone. DataLoader does the collecting and the answering; this module adds
// what our callers need on top: a batch that leaves at once when full, a key that never appears
// twice in one call, calls per group, and a flush for shutdown. No cache: these are writes.

/**
 * When a batch leaves. `{ windowMs }`: that long after its first request. 'turn': at the end of
 * this turn of the event loop (setImmediate, after every callback of the poll phase). 'tick': as
 * soon as the current callback and its microtasks are done (process.nextTick).
 */
export type BatchSchedule = { windowMs: number } | 'turn' | 'tick';

/** A time-window schedule as the committers are configured. */
export interface BatchWindow {
  /** How long the first request of a batch waits for others. */
  windowMs: number;
  /** A batch this large leaves at once. */
  maxBatch: number;
}

export interface BatcherOptions<Req> {
  schedule: BatchSchedule;
  /** A batch this large leaves at once (Infinity: no bound). */
  maxBatch: number;
  /**
   * Two requests with the same key never share a batch: a repeat sends the current batch at once
   * and starts the next one.
   */
  distinctKey?: (request: Req) => string;
  /**
   * The requests of a batch go to `run` per group, one call each (all of them at once); a failed
   * call fails its own group's requests only.
   */
  groupBy?: (request: Req) => string;
}

export interface Batcher<Req, Res> {
  /** Joins the current batch; resolves with this request's answer once the batch's call is done. */
  submit(request: Req): Promise<Res>;
  /** Sends what is collected now and waits for every batch in progress. */
  flush(): Promise<void>;
}

/**
 * `run` makes one call for a batch (of one group: `group` is its groupBy key, '' without groupBy)
 * and answers one result per request, in order; it must not change the array. A failed call fails
 * every request of that call and only those. An answer must not be an Error (DataLoader rejects
 * its request with it).
 */
export function createBatcher<Req, Res>(
  run: (requests: Req[], group: string) => Promise<readonly Res[]>,
  options: BatcherOptions<Req>,
): Batcher<Req, Res> {
  const { schedule, maxBatch, distinctKey, groupBy } = options;
  // The current batch: its size, its keys, and a once-only "send it now".
  let size = 0;
  const keys = distinctKey ? new Set<string>() : null;
  let sendCurrent: (() => void) | null = null;
  const inProgress = new Set<Promise<void>>();

  const call = (requests: Req[], group: string): Promise<readonly Res[]> => {
    try {
      return run(requests, group);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  const runGroups = (requests: Req[]): Promise<readonly (Res | Error)[]> => {
    const grouping = groupBy!;
    const first = grouping(requests[0]);
    let i = 1;
    while (i < requests.length && grouping(requests[i]) === first) i++;
    if (i === requests.length) return call(requests, first);
    const positions = new Map<string, number[]>();
    requests.forEach((request, at) => {
      const group = grouping(request);
      const list = positions.get(group);
      if (list) list.push(at);
      else positions.set(group, [at]);
    });
    // Answered once the last group's call is done (a count, not Promise.all: fewer hops).
    return new Promise((resolve) => {
      const answers = new Array<Res | Error>(requests.length);
      let left = positions.size;
      for (const [group, at] of positions) {
        call(
          at.map((n) => requests[n]),
          group,
        ).then(
          (out) => {
            at.forEach((n, k) => (answers[n] = out[k]));
            if (--left === 0) resolve(answers);
          },
          (err: unknown) => {
            const failure = err instanceof Error ? err : new Error(String(err));
            for (const n of at) answers[n] = failure;
            if (--left === 0) resolve(answers);
          },
        );
      }
    });
  };

  const loader = new DataLoader<Req, Res>(
    (requests) => {
      // DataLoader hands over its own array of the batch (readonly in its types): `run` must not change it.
      const batch = requests as Req[];
      const answers = groupBy ? runGroups(batch) : call(batch, '');
      const done: Promise<void> = answers.then(
        () => void inProgress.delete(done),
        () => void inProgress.delete(done),
      );
      inProgress.add(done);
      return answers;
    },
    {
      cache: false,
      maxBatchSize: maxBatch,
      batchScheduleFn: (dispatch) => {
        let timer: NodeJS.Timeout | undefined;
        let immediate: NodeJS.Immediate | undefined;
        let sent = false;
        const send = () => {
          if (sent) return;
          sent = true;
          if (sendCurrent === send) {
            sendCurrent = null;
            size = 0;
            keys?.clear();
          }
          clearTimeout(timer);
          clearImmediate(immediate);
          dispatch();
        };
        sendCurrent = send;
        if (schedule === 'tick') process.nextTick(send);
        else if (schedule === 'turn') immediate = setImmediate(send);
        else timer = setTimeout(send, schedule.windowMs);
      },
    },
  );

  return {
    submit(request) {
      if (keys) {
        const key = distinctKey!(request);
        if (keys.has(key)) sendCurrent?.();
        keys.add(key);
      }
      const answer = loader.load(request);
      if (++size >= maxBatch) sendCurrent?.();
      return answer;
    },
    async flush() {
      sendCurrent?.();
      await Promise.all([...inProgress]);
    },
  };
}
