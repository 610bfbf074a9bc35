// The benchmark scripts `npm run bench` runs, in this order, with their default arguments and the
// small sizes of `--quick` (which checks the wiring; its figures are not comparable with the targets).
export interface Bench {
  script: string;
  args?: string[];
  env?: Record<string, string>;
  quickArgs?: string[];
  quickEnv?: Record<string, string>;
}

export const benches = {
  auth: { script: 'bench/auth/key-verification.ts' },
  emails: { script: 'bench/emails/run.ts', args: ['--duration', '10'], quickArgs: ['--duration', '3', '--rounds', '1'] },
  smtp: { script: 'bench/smtp/throughput.ts', args: ['--duration', '10'], quickArgs: ['--duration', '3', '--rounds', '1'] },
  worker: { script: 'bench/worker/throughput.ts', args: ['5000', '16', '3'], quickArgs: ['1000', '16', '1'] },
  audience: { script: 'bench/audience/run.ts', quickArgs: ['--runs', '3', '--list-requests', '20', '--contacts', '100000'] },
  segments: { script: 'bench/audience/segments.ts', quickArgs: ['--runs', '3', '--contacts', '100000'] },
  import: { script: 'bench/audience/import.ts', args: ['--rows', '1000000'], quickArgs: ['--rows', '50000'] },
  analytics: { script: 'bench/events/analytics-time-series.ts', quickEnv: { BENCH_TEAMS: '10', BENCH_SECONDS: '3' } },
  ingest: { script: 'bench/events/ingest.ts', env: { BENCH_EVENTS: '20000' }, quickEnv: { BENCH_EVENTS: '3000' } },
  // Issue 21 §5: memory of the compiled build (`npm run build`, as in production).
  'idle-rss': { script: 'bench/idle-rss/run.ts', args: ['3', '20'], quickArgs: ['1', '5'] },
  campaigns: {
    script: 'bench/campaigns/run.ts',
    args: ['100000', '2000'],
    env: { BENCH_WORKER_DIST: 'dist' },
    quickArgs: ['10000', '2000'],
  },
  // Issue 41 §3: the time the hostile inputs of issues 15 and 21 take (their tests check the answers).
  'hostile-input': { script: 'bench/hostile-input/run.ts' },
  // Issue 42: the request log on and off, interleaved.
  'request-log': { script: 'bench/request-log/run.ts', quickArgs: ['--duration', '3', '--rounds', '2'] },
  dashboard: {
    script: 'bench/dashboard/email-log.ts',
    args: ['--emails', '1000000', '--requests', '100'],
    quickArgs: ['--emails', '50000', '--requests', '20'],
  },
  // Issue 45 §5: a burst of N enrollments and N waits due in one minute, with a bare BullMQ floor.
  // 1,000,000 is the size; bench/RESULTS.md says the size each recorded run used.
  automations: { script: 'bench/automations/run.ts', args: ['1000000'], quickArgs: ['5000'] },
} satisfies Record<string, Bench>;

export type BenchName = keyof typeof benches;

export const benchNames = Object.keys(benches) as BenchName[];

/** The arguments and environment of one run of a bench, as a user would type it. */
export function invocation(name: BenchName, quick: boolean): { args: string[]; env: Record<string, string> } {
  const bench: Bench = benches[name];
  return quick
    ? { args: bench.quickArgs ?? bench.args ?? [], env: { ...bench.env, ...bench.quickEnv } }
    : { args: bench.args ?? [], env: { ...bench.env } };
}
