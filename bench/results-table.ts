// The report `npm run bench` prints and records: a line about the run and the machine, then one
// row per figure of bench/targets.ts whose script ran, with the ratio oriented so that ≥ 1 is met.
import { benchNames, type BenchName } from './benches';
import type { BenchResult } from './report-kit';
import { figures, type FigureSpec, type Unit } from './targets';

export interface Outcome {
  name: BenchName;
  /** Undefined when the script failed or wrote no result. */
  result?: BenchResult;
  error?: string;
  seconds: number;
}

export interface RunContext {
  startedAt: Date;
  quick: boolean;
  selected: BenchName[];
  commit: string;
  loadBefore: number;
  loadAfter: number;
  /** bench/machine-speed.ts before and after the run: how fast the cores were (lower is faster). */
  cpuReferenceMs: { before: number; after: number };
  machine: string;
}

const number = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2 });

export function formatValue(v: number, unit: Unit): string {
  switch (unit) {
    case 'ms':
      return v < 1 ? `${number(v * 1000)} µs` : `${number(v)} ms`;
    case 's':
      return `${number(v)} s`;
    case '/s':
      return `${number(v)}/s`;
    case 'MB':
      return `${number(v)} MB`;
    case 'number':
      return number(v);
  }
}

interface Row {
  spec: FigureSpec;
  outcome: Outcome;
  target: string;
  measured: string;
  ratio: string;
  status: 'met' | 'missed' | 'measured' | 'error';
}

/** A figure of a result, or undefined; JSON turns NaN into null (a figure the script could not compute). */
function figure(outcome: Outcome, key: string): number | undefined {
  const value = outcome.result?.figures[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function row(spec: FigureSpec, outcome: Outcome): Row {
  const target = spec.target === undefined ? '—' : `${spec.better === 'higher' ? '≥' : '≤'} ${formatValue(spec.target, spec.unit)}`;
  const value = figure(outcome, spec.key);
  if (value === undefined)
    return { spec, outcome, target, measured: outcome.result ? 'not measured' : 'error', ratio: '—', status: 'error' };
  const measured = `${formatValue(value, spec.unit)}${spec.stat ? ` (${spec.stat})` : ''}`;
  if (spec.target === undefined) return { spec, outcome, target, measured, ratio: '—', status: 'measured' };
  const ratio = spec.better === 'higher' ? value / spec.target : spec.target / value;
  return { spec, outcome, target, measured, ratio: ratio.toFixed(2), status: ratio >= 1 ? 'met' : 'missed' };
}

/** The run's own figures that bear on the cause, e.g. " (this run: worker CPU per email 3.3 ms, ...)". */
function evidence({ spec, outcome }: Row): string {
  const shown = (spec.evidence ?? []).flatMap((e) => {
    const value = figure(outcome, e.key);
    return value === undefined ? [] : [`${e.label} ${formatValue(value, e.unit)}`];
  });
  return shown.length ? ` (this run: ${shown.join(', ')})` : '';
}

function heading(ctx: RunContext, outcomes: Outcome[]): string {
  const when = `${ctx.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const all = ctx.selected.length === benchNames.length;
  const args = [...(ctx.quick ? ['--quick'] : []), ...(all ? [] : ctx.selected)];
  const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
  const took = Math.round(outcomes.reduce((sum, o) => sum + o.seconds, 0));
  return [
    `### ${when}: \`${command}\`, commit ${ctx.commit}`,
    '',
    `Machine: ${ctx.machine}. Load average (1 min) ${ctx.loadBefore.toFixed(2)} before, ${ctx.loadAfter.toFixed(2)} after. ` +
      `CPU reference (\`bench/machine-speed.ts\`, lower is faster) ${ctx.cpuReferenceMs.before} ms before, ${ctx.cpuReferenceMs.after} ms after. ` +
      `Took ${Math.floor(took / 60)} min ${took % 60} s.` +
      (ctx.quick
        ? ' **Quick mode**: reduced sizes and durations, to check the wiring; the figures are not comparable with the targets.'
        : ''),
  ].join('\n');
}

/** The report as markdown: heading, table, then the causes of the misses and the failures. */
export function renderReport(ctx: RunContext, outcomes: Outcome[]): string {
  const rows = outcomes.flatMap((o) => figures.filter((spec) => spec.bench === o.name).map((spec) => row(spec, o)));
  const table = [
    '| figure | target | measured | ratio | status |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.spec.label} | ${r.target} | ${r.measured} | ${r.ratio} | ${r.status} |`),
  ];
  const notes = rows
    .filter((r) => r.status === 'missed')
    .map((r) => `- ${r.spec.label}: ${r.spec.cause ?? 'no cause analysed yet'}${evidence(r)}`);
  const failures = outcomes.filter((o) => o.error).map((o) => `- ${o.name}: ${o.error}`);
  return [
    heading(ctx, outcomes),
    '',
    ...table,
    ...(notes.length
      ? [
          '',
          "Missed: the cause found when the figure last fell short (analysed in bench/HISTORY.md), with this run's figures that bear on it:",
          '',
          ...notes,
        ]
      : []),
    ...(failures.length ? ['', "Scripts that failed (their output is in the run's log):", '', ...failures] : []),
    '',
  ].join('\n');
}
