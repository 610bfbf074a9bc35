// npm's postinstall: generates the Prisma client (`npm run db:generate`) when the dev tools are
// installed. A production install (`npm install --omit=dev`) has neither tsx nor Prisma's CLI and
// needs no generation: the client is compiled into dist/ by `npm run build`.
// Plain JavaScript, since tsx may be absent.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const resolves = (id) => {
  try {
    require.resolve(id, { paths: [root] });
    return true;
  } catch {
    return false;
  }
};

if (!resolves('tsx/package.json') || !resolves('prisma/package.json')) {
  console.log('postinstall: no dev dependencies (production install), Prisma client generation skipped');
} else {
  const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/prisma.ts'), 'generate'], {
    cwd: root,
    stdio: 'inherit',
  });
  process.exit(res.status ?? 1);
}
