import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { HEAP_GROWING_PERCENT, type NodeApp } from './memory-flags';

// The old generation's growth is what each process sets at start (useLowMemoryV8Flags): run in
// a child of its own, the same work that fills the old generation with garbage (objects that
// outlive two scavenges, as a request's did at 2,000 sends/s) takes far fewer full GCs with the
// API's setting than with the worker's.
const root = path.resolve(__dirname, '../../../..');
const child = `
  const { PerformanceObserver, constants } = require('node:perf_hooks');
  const { useLowMemoryV8Flags } = require('./packages/platform/src/process/memory-flags');
  useLowMemoryV8Flags(process.argv[1]);
  let majors = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
  }).observe({ entryTypes: ['gc'] });
  // A live set of about 40 MB whose members are replaced in turn: each replaced one dies old.
  // In turns of the event loop, like a server: V8 starts its marking from tasks between them.
  const live = new Array(200000);
  let i = 0;
  (function turn() {
    for (const end = i + 20000; i < end; i++) live[i % live.length] = { i, text: 'x'.repeat(160 + (i % 7)) };
    if (i < 5000000) setImmediate(turn);
    else setTimeout(() => console.log(majors), 50);
  })();
`;

function majorGcs(app: NodeApp): number {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', child, app], { cwd: root, encoding: 'utf8' });
  return Number(out.trim());
}

it('the API lets its old generation grow further between full GCs than the worker and the relay', () => {
  expect(HEAP_GROWING_PERCENT.api).toBeGreaterThan(HEAP_GROWING_PERCENT.worker);
  const api = majorGcs('api');
  const worker = majorGcs('worker');
  expect(worker).toBeGreaterThan(0);
  expect(api * 2).toBeLessThanOrEqual(worker);
}, 60_000);
