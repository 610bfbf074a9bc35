import { createBatcher, type BatcherOptions } from './batcher';

// The batcher alone, with a recording `run`: which requests share a call, what each caller is
// answered, and which callers a failed call reaches.

/** A batcher whose call answers each request with `<request>!`, recording the calls it was made with. */
function recorded(options: BatcherOptions<string>, fail?: (requests: string[], group: string) => unknown) {
  const calls: string[][] = [];
  const groups: string[] = [];
  const batcher = createBatcher<string, string>(async (requests, group) => {
    calls.push([...requests]);
    groups.push(group);
    const failure = fail?.(requests, group);
    if (failure !== undefined) throw failure;
    return requests.map((r) => `${r}!`);
  }, options);
  return { batcher, calls, groups };
}

const statuses = (results: PromiseSettledResult<unknown>[]) => results.map((r) => r.status);

it('answers each request with its own answer, in order, with one call for the requests of one turn', async () => {
  const { batcher, calls } = recorded({ schedule: 'turn', maxBatch: 100 });
  expect(await Promise.all(['a', 'b', 'c'].map((r) => batcher.submit(r)))).toEqual(['a!', 'b!', 'c!']);
  expect(calls).toEqual([['a', 'b', 'c']]);
  expect(await batcher.submit('d')).toBe('d!');
  expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
});

it("'turn' collects the requests of every callback of a turn; 'tick' sends each callback's requests on their own", async () => {
  const inTwoCallbacks = async (schedule: 'turn' | 'tick') => {
    const { batcher, calls } = recorded({ schedule, maxBatch: 100 });
    const answers = await Promise.all([
      new Promise((resolve) => setImmediate(() => resolve(Promise.all([batcher.submit('a'), batcher.submit('b')])))),
      new Promise((resolve) => setImmediate(() => resolve(batcher.submit('c')))),
    ]);
    expect(answers).toEqual([['a!', 'b!'], 'c!']);
    return calls;
  };
  expect(await inTwoCallbacks('turn')).toEqual([['a', 'b', 'c']]);
  expect(await inTwoCallbacks('tick')).toEqual([['a', 'b'], ['c']]);
});

it('holds the first request of a window for the window, and sends the requests that came meanwhile with it', async () => {
  // The window's clock is jest's: only setTimeout is faked, DataLoader's own ticks run as they do.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  try {
    const { batcher, calls } = recorded({ schedule: { windowMs: 40 }, maxBatch: 100 });
    const first = batcher.submit('a');
    jest.advanceTimersByTime(10);
    const second = batcher.submit('b');
    jest.advanceTimersByTime(29);
    expect(calls).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toEqual([['a', 'b']]);
    expect(await Promise.all([first, second])).toEqual(['a!', 'b!']);
  } finally {
    jest.useRealTimers();
  }
});

it('sends a full batch at once, without waiting for its window', async () => {
  const { batcher, calls } = recorded({ schedule: { windowMs: 60_000 }, maxBatch: 3 });
  const full = Promise.all(['a', 'b', 'c'].map((r) => batcher.submit(r)));
  expect(calls).toEqual([['a', 'b', 'c']]);
  const rest = batcher.submit('d');
  expect(await full).toEqual(['a!', 'b!', 'c!']);
  expect(calls).toHaveLength(1);
  await batcher.flush();
  expect(await rest).toBe('d!');
  expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
});

it('fails every request of a failed call, and only those', async () => {
  const { batcher } = recorded({ schedule: 'turn', maxBatch: 2 }, (requests) => (requests.includes('b') ? new Error('down') : undefined));
  const results = await Promise.allSettled(['a', 'b', 'c', 'd'].map((r) => batcher.submit(r)));
  expect(statuses(results)).toEqual(['rejected', 'rejected', 'fulfilled', 'fulfilled']);
  expect((results[0] as PromiseRejectedResult).reason).toEqual(new Error('down'));
  // The next batch is not affected.
  expect(await batcher.submit('b2')).toBe('b2!');
});

it('rejects with the error a call threw before it returned a promise', async () => {
  const failure = new Error('thrown at once');
  const batcher = createBatcher<string, string>(
    () => {
      throw failure;
    },
    { schedule: 'tick', maxBatch: 10 },
  );
  await expect(batcher.submit('a')).rejects.toBe(failure);
});

it('never puts the same key twice in one call: a repeat sends the batch so far and starts the next', async () => {
  const { batcher, calls } = recorded({ schedule: { windowMs: 60_000 }, maxBatch: 100, distinctKey: (r) => r.slice(0, 1) });
  const answers = Promise.all(['a1', 'b1', 'a2', 'c1', 'a3'].map((r) => batcher.submit(r)));
  expect(calls).toEqual([
    ['a1', 'b1'],
    ['a2', 'c1'],
  ]);
  await batcher.flush();
  expect(await answers).toEqual(['a1!', 'b1!', 'a2!', 'c1!', 'a3!']);
  expect(calls[2]).toEqual(['a3']);
});

it('makes one call per group, answers each request in its own place, and fails a failed group only', async () => {
  const { batcher, calls, groups } = recorded({ schedule: 'turn', maxBatch: 100, groupBy: (r) => r.slice(0, 1) }, (_, group) =>
    group === 'c' ? 'not an Error' : undefined,
  );
  const requests = ['a1', 'b1', 'a2', 'c1', 'b2', 'a3'];
  const results = await Promise.allSettled(requests.map((r) => batcher.submit(r)));
  expect(calls).toEqual([['a1', 'a2', 'a3'], ['b1', 'b2'], ['c1']]);
  expect(groups).toEqual(['a', 'b', 'c']);
  expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'failed'))).toEqual(['a1!', 'b1!', 'a2!', 'failed', 'b2!', 'a3!']);
  // A call of one group only: handed over as it is.
  expect(await Promise.all([batcher.submit('d1'), batcher.submit('d2')])).toEqual(['d1!', 'd2!']);
  expect(calls[3]).toEqual(['d1', 'd2']);
  expect(groups[3]).toBe('d');
});

it('flush sends what is collected and waits for every call in progress', async () => {
  const finished: string[] = [];
  let release!: () => void;
  const slow = new Promise<void>((r) => (release = r));
  const batcher = createBatcher<string, string>(
    async (requests) => {
      if (requests[0] === 'slow') await slow;
      finished.push(...requests);
      return requests;
    },
    { schedule: { windowMs: 60_000 }, maxBatch: 1 },
  );
  const first = batcher.submit('slow');
  let flushed = false;
  const flushing = batcher.flush().then(() => (flushed = true));
  await new Promise((r) => setTimeout(r, 20));
  expect(flushed).toBe(false);
  release();
  await flushing;
  expect(finished).toEqual(['slow']);
  expect(await first).toBe('slow');
  // Nothing in progress, nothing collected: flush has nothing to wait for.
  await batcher.flush();
});
