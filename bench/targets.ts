// The figures `npm run bench` reports, their targets (from the issues; see bench/RESULTS.md's
// Summary) and which way is better. `bench` names the script's result file (bench/out/<bench>.json),
// `key` the figure in it. A figure without a target is shown as measured only.
import type { BenchName } from './benches';

export type Unit = 'ms' | 's' | '/s' | 'MB' | 'ratio';

export interface FigureSpec {
  bench: BenchName;
  key: string;
  label: string;
  unit: Unit;
  better: 'higher' | 'lower';
  target?: number;
  /** Which statistic of the samples the figure is, shown next to the value. */
  stat?: string;
  /** Why the figure fell short when it last did, as analysed in bench/RESULTS.md (not measured by the run). */
  knownCause?: string;
}

export const figures: FigureSpec[] = [
  { bench: 'auth', key: 'cachedP99Ms', label: 'API key verification, cached (steady state)', unit: 'ms', better: 'lower', target: 1, stat: 'p99' },
  {
    bench: 'emails', key: 'singlePerSec', label: 'single sends/s, API alone (`bench/emails/run.ts`)', unit: '/s', better: 'higher', target: 2500, stat: 'median round',
    knownCause: 'shared machine; ~700 µs server CPU per send caps one process near 1,400/s even when quiet',
  },
  {
    bench: 'emails', key: 'singleP99AtTargetRateMs', label: 'single sends p99 at 2,500/s offered', unit: 'ms', better: 'lower', target: 20, stat: 'p99',
    knownCause: 'scheduling delays on an oversubscribed CPU (the floor\'s p99 is as high)',
  },
  { bench: 'emails', key: 'singleVsFloor', label: 'single sends vs the naive floor (1 INSERT + 1 add)', unit: 'ratio', better: 'higher', target: 0.6, stat: 'median of rounds' },
  {
    bench: 'emails', key: 'batchEmailsPerSec', label: 'batched emails/s (`bench/emails/run.ts`)', unit: '/s', better: 'higher', target: 20_000,
    knownCause: 'PostgreSQL insert cost per row (60–110 µs under load)',
  },
  {
    bench: 'worker', key: 'ratioToCeiling', label: "worker throughput vs the SES emulator's own ceiling (`bench/worker/throughput.ts`)", unit: 'ratio', better: 'higher', target: 0.9, stat: 'median of rounds',
    knownCause: '3.3 ms worker CPU per email vs 1.8 ms for a bare SDK loop, on the same 2 cores as the emulator',
  },
  { bench: 'worker', key: 'peakRssMb', label: 'worker RSS', unit: 'MB', better: 'lower', stat: 'peak' },
  { bench: 'audience', key: 'bulkCreateP50Ms', label: 'bulk create of 10,000 contacts (`bench/audience/run.ts`)', unit: 'ms', better: 'lower', target: 1000, stat: 'p50' },
  { bench: 'audience', key: 'listPage1P50Ms', label: 'contacts page 1 of a 1,000,000-contact book', unit: 'ms', better: 'lower', target: 50, stat: 'p50' },
  {
    bench: 'analytics', key: 'timeSeries30dP99Ms', label: "analytics time series over 1.26 M emails' counters (`bench/events/analytics-time-series.ts`)", unit: 'ms', better: 'lower', target: 100, stat: 'p99, sequential',
  },
  {
    bench: 'ingest', key: 'acceptedPerSec', label: 'SNS notification intake (`bench/events/ingest.ts`)', unit: '/s', better: 'higher', target: 2000,
    knownCause: 'the shared machine: an empty express endpoint managed no more at the same time; 0.45 ms CPU per event means ~2,200/s on a free core',
  },
  {
    bench: 'campaigns', key: 'enqueuedSeconds', label: '100,000-contact campaign, start to all enqueued (`bench/campaigns/run.ts`)', unit: 's', better: 'lower', target: 30,
    knownCause: 'waiting on PostgreSQL on the shared machine',
  },
  {
    bench: 'campaigns', key: 'workerPeakRssMb', label: 'worker RSS during that campaign', unit: 'MB', better: 'lower', target: 256, stat: 'peak',
    knownCause: 'the send pipeline alone peaks at 267–337 MB; a heap cap is the next step',
  },
];
