// `npm run bench -- --record`: the report becomes bench/RESULTS.md's "Latest" section (above the
// hand-written sections, below the intro); the report it replaces moves to the top of the
// "History" section at the end of the file. Nothing else in the file is touched.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { trimTrailing } from '@mailrail/platform/text/trim';

export const resultsFile = path.resolve(__dirname, 'RESULTS.md');
const LATEST = '## Latest `npm run bench`';
const HISTORY = '## History of `npm run bench`';

/** Index of the line after the section that starts at `start`: the next level-2 heading, or the end. */
function sectionEnd(lines: string[], start: number): number {
  const next = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return next === -1 ? lines.length : next;
}

/** The lines without the blank ones around them; none when all are blank. */
function trimBlank(lines: string[]): string[] {
  const text = lines.join('\n').trim();
  return text ? text.split('\n') : [];
}

export function withReport(markdown: string, report: string): string {
  const lines = trimTrailing(markdown, '\n').split('\n');
  const latest = [LATEST, '', ...trimBlank(report.split('\n')), ''];

  let previous: string[] = [];
  const at = lines.indexOf(LATEST);
  if (at === -1) {
    const firstSection = lines.findIndex((line) => line.startsWith('## '));
    lines.splice(firstSection === -1 ? lines.length : firstSection, 0, ...latest);
  } else {
    const end = sectionEnd(lines, at);
    previous = trimBlank(lines.slice(at + 1, end));
    lines.splice(at, end - at, ...latest);
  }

  if (previous.length) {
    if (!lines.includes(HISTORY)) lines.push('', HISTORY);
    lines.splice(lines.indexOf(HISTORY) + 1, 0, '', ...previous);
  }
  return `${lines.join('\n')}\n`;
}

export function recordReport(report: string): void {
  writeFileSync(resultsFile, withReport(readFileSync(resultsFile, 'utf8'), report));
}
