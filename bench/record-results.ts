// `npm run bench -- --record`: the report becomes bench/RESULTS.md's "Latest" section (below the
// intro, above the sections that say how each bench is measured); the report it replaces moves to
// the top of the "History" section of bench/HISTORY.md. Nothing else in either file is touched.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { trimTrailing } from '@mailrail/platform/text/trim';

export const resultsFile = path.resolve(__dirname, 'RESULTS.md');
const historyFile = path.resolve(__dirname, 'HISTORY.md');
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

/** RESULTS.md with `report` as its "Latest" section, and the report it replaced (no lines when none). */
function withReport(markdown: string, report: string): { markdown: string; previous: string[] } {
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
  return { markdown: `${lines.join('\n')}\n`, previous };
}

/** HISTORY.md with `previous` on top of its "History" section (the section is added when missing). */
function withHistory(markdown: string, previous: string[]): string {
  const lines = trimTrailing(markdown, '\n').split('\n');
  if (!lines.includes(HISTORY)) lines.push('', HISTORY);
  lines.splice(lines.indexOf(HISTORY) + 1, 0, '', ...previous);
  return `${lines.join('\n')}\n`;
}

export function recordReport(report: string): void {
  const { markdown, previous } = withReport(readFileSync(resultsFile, 'utf8'), report);
  writeFileSync(resultsFile, markdown);
  if (previous.length) {
    const history = existsSync(historyFile) ? readFileSync(historyFile, 'utf8') : '# Benchmark history\n';
    writeFileSync(historyFile, withHistory(history, previous));
  }
}
