import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// A hung test file fails fast (issue 41 §5, test/hang-watchdog.js): a jest run of two files, one
// of which waits forever, ends on its own, fails, and names the hung file, instead of running to
// its (here ten-minute) test timeout.

const repo = path.resolve(__dirname, '../..');
// The watchdog stops every jest worker of the run, so the passing file must be done before the
// other file starts to hang. It is, by construction rather than by a long limit: the hanging file
// makes progress (short tests that pass) until a reporter of this run has heard the passing file's
// result, and only then waits forever. A limit of ten seconds then only has to outlast one of those
// short tests on a stalled machine.
const HANG_SECONDS = 10;

it('a file that makes no progress fails the run with its name, and the other file still passes', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'hang-watchdog-'));
  const passed = path.join(dir, 'passes-reported');
  try {
    writeFileSync(
      path.join(dir, 'hangs.test.js'),
      `const { existsSync } = require('node:fs');
for (let i = 0; i < 3000; i++)
  it('waits for the other file to be reported', async () => {
    if (!existsSync(${JSON.stringify(passed)})) await new Promise((r) => setTimeout(r, 100));
  });
it('waits forever', () => new Promise(() => {}), 600000);
`,
    );
    writeFileSync(path.join(dir, 'passes.test.js'), "it('passes', () => expect(1).toBe(1));\n");
    // Runs in jest's own process, as the watchdog does: the passing file's result has arrived.
    writeFileSync(
      path.join(dir, 'reported.js'),
      `module.exports = class {
  onTestFileResult(test) {
    if (test.path.endsWith('passes.test.js')) require('node:fs').writeFileSync(${JSON.stringify(passed)}, '');
  }
};
`,
    );
    writeFileSync(
      path.join(dir, 'jest.config.js'),
      `module.exports = ${JSON.stringify({
        rootDir: dir,
        testMatch: ['**/*.test.js'],
        transform: {},
        maxWorkers: 2,
        reporters: ['default', path.join(repo, 'test/hang-watchdog.js'), path.join(dir, 'reported.js')],
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
