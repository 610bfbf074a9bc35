// The dashboard's production build (apps/web → apps/web/dist, served by the API at `/`), done only
// when its inputs changed: `npm run build:web` always builds; `npm start`, `npm run build` and
// the browser tests call ensureWebBuilt(), which rebuilds when apps/web/dist is missing or stale.
//
// Stale means: the hash of every source file the last build bundled (vite reports them; core's
// shared enums included), of every file under apps/web/src (a new file counts too) and of
// package-lock.json (a dependency moved) differs from the one stored next to the build.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
export const webDir = path.join(root, 'apps/web');
export const webDistDir = path.join(webDir, 'dist');
/** Written by the build (vite.config.ts): the repository-relative paths of the modules it bundled. */
const INPUTS = '.vite/inputs.json';
const HASH = '.vite/source-hash';

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

function sourceHash(distDir: string): string | null {
  let bundled: string[];
  try {
    bundled = JSON.parse(readFileSync(path.join(distDir, INPUTS), 'utf8')) as string[];
  } catch {
    return null;
  }
  const own = ['index.html', 'vite.config.ts', 'package.json'].map((f) => path.relative(root, path.join(webDir, f)));
  const files = [...new Set([...bundled, ...own, ...filesUnder(path.join(webDir, 'src')), 'package-lock.json'])].sort();
  const h = createHash('sha256');
  for (const f of files) {
    h.update(f);
    h.update('\0');
    h.update(existsSync(path.join(root, f)) ? readFileSync(path.join(root, f)) : 'missing');
    h.update('\0');
  }
  return h.digest('hex');
}

/** True when apps/web/dist was built from the sources as they are now. */
export function webBuildIsFresh(distDir = webDistDir): boolean {
  if (!existsSync(path.join(distDir, 'index.html'))) return false;
  let stored: string;
  try {
    stored = readFileSync(path.join(distDir, HASH), 'utf8').trim();
  } catch {
    return false;
  }
  return stored === sourceHash(distDir);
}

/**
 * Builds into a fresh directory, then swaps it in: a concurrent reader (another test file, a
 * running API) never sees half a build.
 */
export function buildWeb(): void {
  const tmp = path.join(webDir, `.dist-${process.pid}-${Date.now()}`);
  const vite = path.join(root, 'node_modules/vite/bin/vite.js');
  // NODE_ENV=production whatever the caller runs under (jest sets `test`, which would make Vite
  // bundle React's development build: three times the size).
  const run = spawnSync(process.execPath, [vite, 'build', '--outDir', tmp, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: webDir,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (run.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`vite build of apps/web failed (exit ${run.status ?? run.signal})`);
  }
  writeFileSync(path.join(tmp, HASH), `${sourceHash(tmp)}\n`);
  rmSync(webDistDir, { recursive: true, force: true });
  try {
    renameSync(tmp, webDistDir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    // Another process swapped in its build between our rm and rename: fine if it is current.
    if (!webBuildIsFresh()) throw err;
  }
}

/** Builds the dashboard unless apps/web/dist is current. Returns whether it built. */
export function ensureWebBuilt(log: (line: string) => void = () => undefined): boolean {
  if (webBuildIsFresh()) return false;
  log('» building the dashboard (apps/web → apps/web/dist)');
  buildWeb();
  return true;
}

if (require.main === module) {
  const started = performance.now();
  try {
    buildWeb();
    console.log(`built apps/web/dist in ${Math.round(performance.now() - started)} ms`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
