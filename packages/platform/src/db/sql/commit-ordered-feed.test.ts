import { visibleInSnapshot } from './commit-ordered-feed';

// pg_current_snapshot()'s text form is xmin:xmax:xip_list (PostgreSQL's "Snapshot Information
// Functions"); a transaction is visible when it ended before the snapshot: below xmin, or below
// xmax and not in progress then.
describe('visibleInSnapshot', () => {
  it('reads a snapshot as PostgreSQL does', () => {
    const snapshot = '100:110:100,102,107';
    expect(visibleInSnapshot(99n, snapshot)).toBe(true);
    expect(visibleInSnapshot(100n, snapshot)).toBe(false);
    expect(visibleInSnapshot(101n, snapshot)).toBe(true);
    expect(visibleInSnapshot(102n, snapshot)).toBe(false);
    expect(visibleInSnapshot(105n, snapshot)).toBe(true);
    expect(visibleInSnapshot(107n, snapshot)).toBe(false);
    expect(visibleInSnapshot(110n, snapshot)).toBe(false);
    expect(visibleInSnapshot(5_000_000_000n, snapshot)).toBe(false);
  });

  it('takes a snapshot with nothing in progress', () => {
    expect(visibleInSnapshot(41n, '42:42:')).toBe(true);
    expect(visibleInSnapshot(42n, '42:42:')).toBe(false);
  });
});
