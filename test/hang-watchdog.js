// A jest reporter that fails a hung test file fast (issue 41 §5): a file that makes no progress
// (no test starting or finishing) for TEST_HANG_SECONDS (180 by default) stops the run's wait
// instead of running to CI's 90-minute limit. It prints the file and its last finished test, asks
// every jest worker for a diagnostic report (node's --report-on-signal, set up in jest.config.ts:
// the JavaScript stack and the open handles, written under .cache/hang-reports/ and summarised
// here), then kills the workers, so jest fails the files they ran and goes on with the rest.
// Plain JavaScript: jest loads reporters without transforming them.
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const REPORT_DIR = path.resolve(__dirname, '../.cache/hang-reports');

/** The pids of this process's jest workers (its children running jest-worker's processChild), from /proc. */
function workerPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('processChild')) pids.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return pids;
}

/** The JavaScript stack of each report written since `since`, a few lines each. */
function reportStacks(since) {
  let files = [];
  try {
    files = readdirSync(REPORT_DIR).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const out = [];
  for (const f of files) {
    const full = path.join(REPORT_DIR, f);
    try {
      const report = JSON.parse(readFileSync(full, 'utf8'));
      if (Date.parse(report.header.dumpEventTime) < since - 1000) continue;
      const stack = (report.javascriptStack?.stack ?? []).slice(0, 15).join('\n      ');
      out.push(`  worker ${report.header.processId} (${full}):\n    ${report.javascriptStack?.message ?? ''}\n      ${stack}`);
    } catch {
      // Half written, or not a report.
    }
  }
  return out;
}

class HangWatchdog {
  constructor(_globalConfig, options = {}) {
    this.limitMs = Number(process.env.TEST_HANG_SECONDS ?? options.seconds ?? 180) * 1000;
    this.pollMs = Math.min(10_000, this.limitMs / 4);
    /** Running files: path → { since, lastTest }. */
    this.running = new Map();
    this.timer = null;
  }

  onRunStart() {
    this.timer = setInterval(() => this.check(), this.pollMs);
    this.timer.unref();
  }

  onTestFileStart(test) {
    this.running.set(test.path, { since: Date.now(), lastTest: null });
  }

  onTestCaseStart(test) {
    const file = this.running.get(test.path);
    if (file) file.since = Date.now();
  }

  onTestCaseResult(test, result) {
    const file = this.running.get(test.path);
    if (file) Object.assign(file, { since: Date.now(), lastTest: result.fullName });
  }

  onTestFileResult(test) {
    this.running.delete(test.path);
  }

  onRunComplete() {
    clearInterval(this.timer);
  }

  check() {
    const now = Date.now();
    const hung = [...this.running].filter(([, f]) => now - f.since > this.limitMs);
    if (hung.length === 0) return;
    for (const [file, f] of hung) {
      process.stderr.write(
        `\nHANG: ${path.relative(process.cwd(), file)} made no progress for ${Math.round((now - f.since) / 1000)} s ` +
          `(TEST_HANG_SECONDS ${this.limitMs / 1000}); last finished test: ${f.lastTest ?? 'none'}\n`,
      );
      f.since = now; // reported once; the kill below ends it
    }
    const workers = workerPids();
    if (workers.length === 0) {
      // In band (one file, `-i`): the file runs in this very process; its stack is ours.
      const report = process.report.getReport();
      process.stderr.write(`HANG: this process's stack:\n      ${report.javascriptStack.stack.slice(0, 15).join('\n      ')}\n`);
      process.exit(1);
    }
    for (const pid of workers) {
      try {
        process.kill(pid, 'SIGUSR2');
      } catch {
        // Gone already.
      }
    }
    // A moment for the reports to be written, then the workers go: jest fails their files.
    setTimeout(() => {
      const stacks = reportStacks(now);
      process.stderr.write(
        `HANG: the workers' stacks:\n${stacks.join('\n') || '  (no report: a worker stuck in synchronous code cannot write one)'}\n`,
      );
      for (const pid of workers) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }, 2000).unref();
  }
}

module.exports = HangWatchdog;
