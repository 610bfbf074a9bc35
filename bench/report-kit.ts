// Machine-readable results of the benchmark scripts: each writes bench/out/<name>.json, which
// `npm run bench` (bench/run-all.ts) reads to compare the figures with their targets.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const outDir = path.resolve(__dirname, 'out');

/** Figure name → measured value, in the unit bench/targets.ts declares for it. */
export type Figures = Record<string, number>;

export interface BenchResult {
  name: string;
  at: string;
  figures: Figures;
  /** Whatever else the script wants to keep (its parameters, per-round figures...). */
  details?: unknown;
}

const resultFile = (name: string) => path.join(outDir, `${name}.json`);

export function writeResult(name: string, figures: Figures, details?: unknown): void {
  const result: BenchResult = { name, at: new Date().toISOString(), figures, details };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(resultFile(name), JSON.stringify(result, null, 2));
}

export function readResult(name: string): BenchResult | undefined {
  return existsSync(resultFile(name)) ? (JSON.parse(readFileSync(resultFile(name), 'utf8')) as BenchResult) : undefined;
}

/** Removes a previous result, so that a run that fails cannot be mistaken for one that wrote it. */
export function clearResult(name: string): void {
  rmSync(resultFile(name), { force: true });
}
