import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// A hung test file fails fast (issue 41 §5, test/hang-watchdog.js): a jest run of two files, one
// of which waits forever, ends on its own, fails, and names the hung file, instead of running to
// its (here ten-minute) test timeout.

const repo = path.resolve(__dirname, '../..');
// The watchdog stops every jest worker of the run, so the passing file must be done by then: it
// needs a worker started and one trivial test run, which took over 4 s in a CI run on a loaded
// machine (a limit of 3 s flagged it too). Thirty seconds leave the passing file room on any
// machine that runs the suite at all; the hanging file still fails in a minute, not ten.
const HANG_SECONDS = 30;

it('a file that makes no progress fails the run with its name, and the other file still passes', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'hang-watchdog-'));
  try {
    writeFileSync(path.join(dir, 'hangs.test.js'), "it('waits forever', () => new Promise(() => {}), 600000);\n");
    writeFileSync(path.join(dir, 'passes.test.js'), "it('passes', () => expect(1).toBe(1));\n");
    writeFileSync(
      path.join(dir, 'jest.config.js'),
      `module.exports = ${JSON.stringify({
        rootDir: dir,
        testMatch: ['**/*.test.js'],
        transform: {},
        maxWorkers: 2,
        reporters: ['default', path.join(repo, 'test/hang-watchdog.js')],
      })};\n`,
    );
    const run = spawnSync(
      process.execPath,
      [path.join(repo, 'node_modules/jest/bin/jest.js'), '--config', path.join(dir, 'jest.config.js')],
      {
        cwd: dir,
        env: { ...process.env, TEST_HANG_SECONDS: String(HANG_SECONDS), NODE_OPTIONS: '' },
        encoding: 'utf8',
        // A guard only: without the watchdog the run would wait for the ten-minute test timeout.
        timeout: 120_000,
      },
    );
    expect(run.signal).toBeNull();
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/HANG: hangs\.test\.js made no progress/);
    expect(run.stderr).toMatch(/PASS .*passes\.test\.js/);
    expect(run.stderr).toMatch(/FAIL .*hangs\.test\.js/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 150_000);
