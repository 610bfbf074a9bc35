// Group commit for the send path's statements (the claim, claim-committer.ts; the acceptance,
// acceptance-committer.ts). A statement per email was most of the worker's database work per email
// (a pool checkout, a round trip, a commit, a wake-up of the server). A group committer collects the
// requests that arrive within a few milliseconds, runs one statement for all of them, and answers
// each caller with its own result: the caller still waits for its own email, so what it knows once
// it resumes is what the single-row statement would have told it, at most the window later.

export interface GroupCommitterSettings {
  /** How long the first request of a group waits for others. */
  windowMs: number;
  /** A group this large is written at once. */
  maxBatch: number;
}

export interface GroupCommitter<In, Out> {
  /** Joins the current group; resolves with this request's answer once the group's statement is done. */
  submit(key: string, request: In): Promise<Out>;
  /** Writes what is collected now and waits for every group in progress. */
  flush(): Promise<void>;
}

interface Pending<In, Out> {
  request: In;
  resolve: (answer: Out) => void;
  reject: (err: unknown) => void;
}

/**
 * `commit` runs one statement for a group and answers one result per request, in order. A failed
 * statement fails every request of its group (and only those): each caller decides how to retry.
 * Two requests with the same key never share a group (the second starts a new one).
 */
export function createGroupCommitter<In, Out>(
  commit: (requests: In[]) => Promise<readonly Out[]>,
  settings: GroupCommitterSettings,
): GroupCommitter<In, Out> {
  let group = new Map<string, Pending<In, Out>>();
  let timer: NodeJS.Timeout | null = null;
  const writing = new Set<Promise<void>>();

  const write = async (batch: Pending<In, Out>[]) => {
    try {
      const answers = await commit(batch.map((p) => p.request));
      batch.forEach((p, i) => p.resolve(answers[i]));
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };
  const writeGroup = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (group.size === 0) return;
    const batch = [...group.values()];
    group = new Map();
    const done = write(batch).finally(() => writing.delete(done));
    writing.add(done);
  };

  return {
    submit(key, request) {
      return new Promise<Out>((resolve, reject) => {
        if (group.has(key)) writeGroup();
        group.set(key, { request, resolve, reject });
        if (group.size >= settings.maxBatch) writeGroup();
        else timer ??= setTimeout(writeGroup, settings.windowMs);
      });
    },
    async flush() {
      writeGroup();
      await Promise.all([...writing]);
    },
  };
}
