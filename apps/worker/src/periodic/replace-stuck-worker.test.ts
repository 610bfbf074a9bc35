import { stuckVerdict, type StuckCheck } from './replace-stuck-worker';

// The rule on an injected clock: each case sets the times, nothing waits.
const STUCK_AFTER_MS = 30_000;
const at = (check: Partial<StuckCheck>): StuckCheck => ({
  now: 1_000_000,
  lastProgressAt: 1_000_000 - 60_000,
  oldestDueAt: 1_000_000 - 60_000,
  concurrency: 1,
  running: [],
  ...check,
});

describe('stuckVerdict', () => {
  it('finds stuck a worker with a free slot that took no job while one was due for the whole wait', () => {
    expect(stuckVerdict(at({}), STUCK_AFTER_MS)).toMatchObject({ freeSlots: 1, lostJobs: [] });
  });

  it('keeps a worker that finished a job a moment ago: it is fetching the next, however long that one waited', () => {
    expect(stuckVerdict(at({ lastProgressAt: 1_000_000 - 5 }), STUCK_AFTER_MS)).toBeNull();
  });

  it('keeps a worker whose every slot runs a job Redis still holds as active', () => {
    expect(stuckVerdict(at({ running: [{ id: 'long', active: true }] }), STUCK_AFTER_MS)).toBeNull();
  });

  it('finds stuck a worker whose running job Redis no longer holds (lost in a failover)', () => {
    expect(stuckVerdict(at({ running: [{ id: 'lost', active: false }] }), STUCK_AFTER_MS)).toMatchObject({
      freeSlots: 0,
      lostJobs: ['lost'],
    });
  });

  it('waits the whole stuckAfterMs from when the job became due, and needs a due job at all', () => {
    expect(stuckVerdict(at({ oldestDueAt: 1_000_000 - STUCK_AFTER_MS + 1 }), STUCK_AFTER_MS)).toBeNull();
    expect(stuckVerdict(at({ oldestDueAt: 1_000_000 - STUCK_AFTER_MS }), STUCK_AFTER_MS)).not.toBeNull();
    expect(stuckVerdict(at({ oldestDueAt: undefined }), STUCK_AFTER_MS)).toBeNull();
  });
});
