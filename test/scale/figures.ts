import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadavg } from 'node:os';

// The scale proof's figures (bench/HISTORY.md copies them): printed, and appended with the time and
// the load average to .cache/scale/figures.log, which outlives jest's console.
const file = path.resolve(__dirname, '../../.cache/scale/figures.log');

export function recordFigures(test: string, lines: string[]): void {
  const head = `${new Date().toISOString()} ${test} load_average=${loadavg()
    .map((l) => l.toFixed(2))
    .join(',')}`;
  const text = [head, ...lines.map((l) => `  ${l}`)].join('\n');
  mkdirSync(path.dirname(file), { recursive: true });
  appendFileSync(file, `${text}\n`);
  console.log(text);
}
