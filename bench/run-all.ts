// `npm run bench [-- [--quick] [--record] [bench ...]]`: runs the benchmark scripts of
// bench/benches.ts one at a time (side by side they would disturb each other), then prints their
// figures against the targets of bench/targets.ts and writes the table to bench/out/latest.md;
// --record also puts it in bench/RESULTS.md. Exits non-zero when a script failed.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchNames, benches, invocation, type BenchName } from './benches';
import { recordReport, resultsFile } from './record-results';
import { clearResult, outDir, readResult } from './report-kit';
import { renderReport, type Outcome } from './results-table';
import { machineSpeedMs } from './machine-speed';

const root = path.resolve(__dirname, '..');

function parseArgs(argv: string[]) {
  const flags = argv.filter((a) => a.startsWith('--'));
  const names = argv.filter((a) => !a.startsWith('--'));
  const unknown = [
    ...flags.filter((f) => f !== '--quick' && f !== '--record'),
    ...names.filter((n) => !benchNames.includes(n as BenchName)),
  ];
  if (unknown.length) {
    console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run bench -- [--quick] [--record] [${benchNames.join('|')} ...]`);
    process.exit(2);
  }
  const quick = flags.includes('--quick');
  const record = flags.includes('--record');
  // Quick figures are not comparable with the targets; RESULTS.md keeps only real runs.
  if (quick && record) {
    console.error('--record is refused with --quick: quick-mode figures do not belong in bench/RESULTS.md');
    process.exit(2);
  }
  return { quick, record, selected: names.length ? benchNames.filter((n) => names.includes(n)) : benchNames };
}

async function runBench(name: BenchName, quick: boolean): Promise<Outcome> {
  const { script } = benches[name];
  const { args, env } = invocation(name, quick);
  const shown = [...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'npx tsx', script, ...args].join(' ');
  console.log(`\n=== ${name}: ${shown}\n`);
  clearResult(name);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: 'inherit',
  });
  const exit = await new Promise<string | null>((resolve) => {
    child.on('error', (err) => resolve(err.message));
    child.on('exit', (code, signal) => resolve(code === 0 ? null : signal ? `killed by ${signal}` : `exit code ${code}`));
  });
  const seconds = (performance.now() - started) / 1000;
  const result = exit ? undefined : readResult(name);
  const error = exit ?? (result ? undefined : `wrote no bench/out/${name}.json`);
  console.log(`\n=== ${name}: ${error ? `failed (${error})` : 'done'} after ${seconds.toFixed(0)} s`);
  return { name, result, error, seconds };
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim();
    return dirty ? `${head} with uncommitted changes` : head;
  } catch {
    return 'unknown';
  }
}

async function main() {
  const { quick, record, selected } = parseArgs(process.argv.slice(2));
  const cpus = os.cpus();
  const machine = `${cpus.length} cores (${cpus[0]?.model.trim()}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`;
  const startedAt = new Date();
  const loadBefore = os.loadavg()[0];
  const cpuReferenceBefore = machineSpeedMs();
  const outcomes: Outcome[] = [];
  for (const name of selected) outcomes.push(await runBench(name, quick));

  const report = renderReport(
    {
      startedAt,
      quick,
      selected,
      commit: commit(),
      loadBefore,
      loadAfter: os.loadavg()[0],
      cpuReferenceMs: { before: cpuReferenceBefore, after: machineSpeedMs() },
      machine,
    },
    outcomes,
  );
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'latest.md'), report);
  console.log(`\n${report}`);
  console.log(`written to ${path.relative(root, path.join(outDir, 'latest.md'))}`);
  if (record) {
    recordReport(report);
    console.log(`recorded in ${path.relative(root, resultsFile)}`);
  }
  if (outcomes.some((o) => o.error)) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
