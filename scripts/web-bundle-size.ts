// The dashboard's first-load JavaScript, gzip-compressed, read from Vite's manifest of the
// production build (`npx tsx scripts/web-bundle-size.ts`; the budget test is
// test/dashboard/bundle-size.test.ts). Two first loads are measured:
// - the sign-in page: the entry chunk and everything it imports statically;
// - a signed-in user opening `/`: that, plus the Overview page's chunk, its static imports and
//   the chart it loads right after (the heaviest page a first visit lands on).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { webDistDir } from './web-build';

export const FIRST_LOAD_BUDGET_BYTES = 300 * 1024;

interface ManifestChunk {
  file: string;
  src?: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
}
type Manifest = Record<string, ManifestChunk>;

/** The chunk keys loaded with `key`: itself and its static imports, transitively. */
function staticClosure(manifest: Manifest, key: string, into = new Set<string>()): Set<string> {
  if (into.has(key)) return into;
  into.add(key);
  for (const imp of manifest[key]?.imports ?? []) staticClosure(manifest, imp, into);
  return into;
}

export interface LoadSize {
  files: string[];
  gzipBytes: number;
}

export function firstLoadJs(distDir = webDistDir): { signIn: LoadSize; overview: LoadSize } {
  const manifest = JSON.parse(readFileSync(path.join(distDir, '.vite/manifest.json'), 'utf8')) as Manifest;
  const entry = Object.keys(manifest).find((k) => manifest[k].isEntry);
  if (!entry) throw new Error('the Vite manifest has no entry chunk');
  const overviewPage = Object.keys(manifest).find((k) => k.endsWith('overview/OverviewPage.tsx'));
  if (!overviewPage) throw new Error('the Vite manifest has no Overview page chunk (src/overview/OverviewPage.tsx)');

  const signIn = staticClosure(manifest, entry);
  const overview = staticClosure(manifest, overviewPage, new Set(signIn));
  for (const dyn of manifest[overviewPage].dynamicImports ?? []) staticClosure(manifest, dyn, overview);

  const size = (keys: Set<string>): LoadSize => {
    const files = [...keys].map((k) => manifest[k].file).filter((f) => f.endsWith('.js'));
    return { files, gzipBytes: files.reduce((sum, f) => sum + gzipSync(readFileSync(path.join(distDir, f)), { level: 9 }).length, 0) };
  };
  return { signIn: size(signIn), overview: size(overview) };
}

if (require.main === module) {
  const { signIn, overview } = firstLoadJs();
  const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
  console.log(`sign-in page first load: ${kb(signIn.gzipBytes)} gzip JavaScript in ${signIn.files.length} files`);
  console.log(
    `signed-in first load (/ → Overview with its chart): ${kb(overview.gzipBytes)} gzip JavaScript in ${overview.files.length} files`,
  );
  console.log(`budget: ${kb(FIRST_LOAD_BUDGET_BYTES)}`);
  if (overview.gzipBytes > FIRST_LOAD_BUDGET_BYTES) process.exit(1);
}
