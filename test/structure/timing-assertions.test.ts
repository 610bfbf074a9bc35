import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, testFilePaths } from '@mailrail/testing/source-files';

// No test asserts how fast the product runs on this machine (issue 41 §3): a test outside
// test/timing/ (test/timing/README.md) that compares a duration read from the wall clock with a
// number fails here. The obvious forms: `Date.now()`, `performance.now()` or `process.hrtime` in
// the value of an `expect(...)` compared with toBeLessThan / toBeGreaterThan (OrEqual) /
// toBeCloseTo, a variable holding `Date.now() - ...` compared so, and a lower bound that reads
// the clock when it is checked (`toBeGreaterThan(Date.now() + ...)`: a stall fails it). An upper
// bound read after the fact (`toBeLessThanOrEqual(Date.now())`) cannot fail on a slow machine.
// A latency, lag or rate a helper computed, or the heap, is caught by its name instead: a value
// whose last name has a word latency, lag, p50 .. p999, rps, heap or rss, or the words "per
// second" (`figures.p99`, `run.sendLagP99`, `requestsPerSec`, `heapUsed`), compared with a bound
// made of numbers alone. A stepped clock's figures are exact: `toBe`, which this leaves alone.
// No allow-list: what must stay moves to test/timing/ with a tolerance derived from its rule.

const THIS_FILE = 'test/structure/timing-assertions.test.ts';

const READS_CLOCK = /\b(?:Date|performance)\.now\(\)|\bprocess\.hrtime\b/;
// What follows `expect(...)`: an optional `.not`, then a comparison matcher and its `(`.
const COMPARISON = /^\s*\.(?:not\s*\.\s*)?(toBeLessThan|toBeLessThanOrEqual|toBeGreaterThan|toBeGreaterThanOrEqual|toBeCloseTo)\s*\(/;
// `const elapsed = Date.now() - started`: a duration kept in a variable.
const DURATION_VARIABLE = /\b(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:Date|performance)\.now\(\)\s*-/g;

const MEASURE_WORDS = /^(?:latency|latencies|lag|p\d{2,3}|rps|heap|rss)$/;
// A bound of numbers alone: `50`, `16 * 1024`, `2_000`.
const NUMBERS_ONLY = /^[\d_.\s+\-*/()]+$/;

/** Whether an expression's last name reads as a latency, a lag, a rate or a heap size. */
function namesAMeasure(value: string): boolean {
  const last = value.match(/\b[A-Za-z_][\w$]*/g)?.at(-1) ?? '';
  const words = last
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_$]+/);
  return words.some((w, i) => MEASURE_WORDS.test(w) || (w === 'per' && /^sec(?:ond)?s?$/.test(words[i + 1] ?? '')));
}

/** Test files under apps/, packages/ and test/, from the repo root, except the timing folder. */
const testFiles = () => testFilePaths().filter((path) => !path.startsWith('test/timing/') && path !== THIS_FILE);

/** The index just past the parenthesis that closes the one at `open`, or -1 (a counting scan). */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

/** Each comparison of a wall-clock reading in `text`, as `line: the expect`. */
function timingComparisons(text: string): string[] {
  const durations = new Set([...text.matchAll(DURATION_VARIABLE)].map((m) => m[1]));
  const holdsDuration = (value: string) => value.split(/[^\w$]+/).some((word) => durations.has(word));
  const found: string[] = [];
  for (let at = text.indexOf('expect('); at !== -1; at = text.indexOf('expect(', at + 1)) {
    const valueEnd = closingParen(text, at + 'expect'.length);
    if (valueEnd === -1) continue;
    const matcher = COMPARISON.exec(text.slice(valueEnd, valueEnd + 200));
    if (!matcher) continue;
    const value = text.slice(at + 'expect('.length, valueEnd - 1);
    const boundOpen = valueEnd + matcher[0].length - 1;
    const bound = text.slice(boundOpen + 1, Math.max(boundOpen + 1, closingParen(text, boundOpen) - 1));
    const lowerBound = matcher[1].startsWith('toBeGreaterThan');
    const boundReadsClock = READS_CLOCK.test(bound) && (lowerBound || matcher[1] === 'toBeCloseTo');
    const namedMeasure = namesAMeasure(value) && NUMBERS_ONLY.test(bound.trim());
    const measured = READS_CLOCK.test(value) || holdsDuration(value) || boundReadsClock || namedMeasure;
    if (measured) {
      const line = text.slice(0, at).split('\n').length;
      found.push(`${line}: ${text.slice(at, closingParen(text, boundOpen)).replace(/\s+/g, ' ')}`);
    }
  }
  return found;
}

it('no test outside test/timing/ compares a wall-clock duration with a number', () => {
  const offending = testFiles().flatMap((f) => timingComparisons(readFileSync(join(REPO_ROOT, f), 'utf8')).map((c) => `${f}:${c}`));
  expect(offending).toEqual([]);
});

it('recognises the forms it forbids, and leaves bounds that a slow machine cannot fail alone', () => {
  // Forbidden: a duration measured by the test, against a number.
  expect(timingComparisons('expect(performance.now() - t0).toBeLessThan(50);')).toHaveLength(1);
  expect(timingComparisons('expect(Date.now() - signalled).toBeGreaterThanOrEqual(3000);')).toHaveLength(1);
  expect(timingComparisons('expect(Math.abs(t - Date.now()))\n  .toBeLessThan(60_000);')).toHaveLength(1);
  expect(timingComparisons('const elapsed = Date.now() - started;\nexpect(elapsed).not.toBeGreaterThan(2_000);')).toHaveLength(1);
  // Forbidden: a lower bound read from the clock when it is checked.
  expect(timingComparisons('expect(row.at.getTime()).toBeGreaterThan(Date.now() + 9 * 3600_000);')).toHaveLength(1);
  // Forbidden: a latency, lag, rate or heap size computed by a helper, against a number.
  expect(timingComparisons('expect(steady.sendLagP99).toBeLessThan(50);')).toHaveLength(1);
  expect(timingComparisons('expect(figures.p99).toBeLessThanOrEqual(2 * 100);')).toHaveLength(1);
  expect(timingComparisons('expect(run.requestsPerSec).toBeGreaterThan(1_000);')).toHaveLength(1);
  expect(timingComparisons('expect(Math.max(...latencies)).toBeLessThan(20);')).toHaveLength(1);
  expect(timingComparisons('expect(process.memoryUsage().heapUsed).toBeLessThan(64 * 1024 * 1024);')).toHaveLength(1);
  // Allowed: exact figures of a stepped clock, figures against each other, names that only look alike.
  expect(timingComparisons('expect(figures.perSecond).toBe(30 / 1.47);')).toEqual([]);
  expect(timingComparisons('expect(figures.p99).toBeGreaterThanOrEqual(figures.sendLagP99);')).toEqual([]);
  expect(timingComparisons('expect(flags.length).toBeLessThan(3);')).toEqual([]);
  expect(timingComparisons('expect(overview.gzipBytes).toBeLessThanOrEqual(300 * 1024);')).toEqual([]);
  // Allowed: bounds from instants taken around the action, an upper bound read after it, and the rest.
  expect(timingComparisons('const before = Date.now();\nexpect(delay).toBeLessThanOrEqual(due - before);')).toEqual([]);
  expect(timingComparisons('expect(expiresAt).toBeLessThanOrEqual(Date.now() + 7 * DAY);')).toEqual([]);
  expect(timingComparisons('expect(count).toBeLessThan(300);')).toEqual([]);
  expect(timingComparisons('await expect(send({ leaveBy: Date.now() - 1 })).rejects.toMatchObject({ name: LATE });')).toEqual([]);
});
