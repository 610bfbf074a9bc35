import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '@mailrail/testing/source-files';

// The layering rules of eslint.config.mjs, run on imports that must be refused and on imports that
// must pass: the rules are only worth something if a wrong import really fails `npm run lint`.
// ESLint loads its ESM config, which jest's module system cannot, so one child node process lints
// every case.
const refused: [string, string][] = [
  ['packages/platform/src/config/x.ts', "import { x } from '@mailrail/domain/emails/address';"],
  ['packages/domain/src/emails/x.ts', "import { x } from '@mailrail/testing/databases';"],
  ['packages/domain/src/emails/x.ts', "import { x } from '@mailrail/tools/cli/main';"],
  ['packages/domain/src/emails/x.ts', "import { x } from '../../../platform/src/ids';"],
  ['apps/worker/src/send/x.ts', "import { x } from '../../../api/src/emails/routes';"],
  ['apps/api/src/emails/x.ts', "import { x } from '@mailrail/testing/fake-ses';"],
  ['apps/api/src/emails/x.ts', "import { x } from '@mailrail/worker/src/worker';"],
];
const allowed: [string, string][] = [
  ['packages/domain/src/emails/x.ts', "import { x } from '@mailrail/platform/ids';"],
  ['packages/domain/src/emails/x.ts', "import { x } from '../domains/sender-domain';"],
  ['apps/api/src/emails/x.test.ts', "import { x } from '@mailrail/testing/fake-ses';"],
  ['apps/worker/src/testing/x.ts', "import { x } from '@mailrail/testing/databases';"],
  ['packages/testing/src/x.ts', "import { x } from '@mailrail/tools/prisma/prisma-cli';"],
];

const LINT_CASES = `
const { ESLint } = require('eslint');
const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const eslint = new ESLint({ cwd: process.cwd() });
(async () => {
  const out = [];
  for (const [filePath, line] of cases) {
    const [r] = await eslint.lintText(line + '\\nexport const used = x;\\n', { filePath });
    out.push(r.messages.filter((m) => m.ruleId === 'no-restricted-imports').length);
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

let counts: number[];
beforeAll(() => {
  const out = execFileSync(process.execPath, ['-e', LINT_CASES], { cwd: REPO_ROOT, input: JSON.stringify([...refused, ...allowed]) });
  counts = JSON.parse(out.toString()) as number[];
});

it.each(refused.map((c, i) => [...c, i] as const))('%s may not import: %s', (_file, _line, i) => {
  expect(counts[i]).toBeGreaterThan(0);
});

it.each(allowed.map((c, i) => [...c, refused.length + i] as const))('%s may import: %s', (_file, _line, i) => {
  expect(counts[i]).toBe(0);
});
