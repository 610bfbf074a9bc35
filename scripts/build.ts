// `npm run build`: compiles each process entry to one JavaScript file under dist/ with esbuild.
// Why esbuild and not tsc: our own code is reached through tsconfig paths (`@mailrail/platform/*`,
// `@mailrail/domain/*`, ...), which tsc leaves unrewritten in its output; esbuild resolves them while
// bundling, so the output keeps working when packages move or split. Everything under
// node_modules stays external (required at run time, as installed), which also lets Prisma's
// client find its WebAssembly query compiler in @prisma/client/runtime. Type checking stays
// with `npm run typecheck`; this only transpiles (about a second).
import { build, type Plugin } from 'esbuild';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { buildWeb } from './web-build';

const root = path.resolve(__dirname, '..');
export const distDir = path.join(root, 'dist');

/** Output file (under dist/, without .js) → source entry. */
export const entries: Record<string, string> = {
  'api/main': 'apps/api/src/main.ts',
  // The campaign preview render thread, loaded by the API from next to its main.js (render-pool.ts).
  'api/render-thread': 'apps/api/src/campaigns/render-thread.ts',
  'worker/main': 'apps/worker/src/main.ts',
  'smtp/main': 'apps/smtp/src/main.ts',
  'cli/main': 'packages/tools/src/cli/main.ts',
};

// A bare import is external unless it resolves (through tsconfig paths) to our own sources.
// esbuild's `packages: 'external'` decides before tsconfig paths and would leave `@mailrail/*`
// external, which node cannot load (it is TypeScript).
const nodeModulesExternal: Plugin = {
  name: 'node-modules-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === 'resolving') return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      if (resolved.errors.length) return { errors: resolved.errors };
      if (resolved.external || resolved.path.split(path.sep).includes('node_modules')) return { path: args.path, external: true };
      return resolved;
    });
  },
};

/** Builds every entry into outDir (dist/ by default; it must lie inside the repository so node finds node_modules). */
export async function buildAll(outDir = distDir): Promise<void> {
  if (!existsSync(path.join(root, 'packages/platform/src/db/generated/client.ts'))) {
    throw new Error('the Prisma client is not generated: run `npm run db:generate` first');
  }
  rmSync(outDir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(entries).map(([out, src]) => [out, path.join(root, src)])),
    outdir: outDir,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    tsconfig: path.join(root, 'tsconfig.json'),
    plugins: [nodeModulesExternal],
    // No keepNames: the output is not minified, so functions and classes keep their own names,
    // and keepNames would wrap every closure in a defineProperty call each time it is created
    // (about 3 % of the API's CPU per send). Only a top-level name two modules share gets a
    // numeric suffix; test/build/compiled-output.test.ts fails if a class is so renamed, since its
    // name reaches the logs (pino's `err.type`).
    sourcemap: 'linked',
    // Paths in the source maps relative to dist/, so the output is the same in every checkout.
    sourceRoot: '',
    logLevel: 'warning',
    legalComments: 'none',
  });
}

if (require.main === module) {
  const started = performance.now();
  buildAll()
    .then(() =>
      console.log(
        `built ${Object.keys(entries)
          .map((e) => `dist/${e}.js`)
          .join(', ')} in ${Math.round(performance.now() - started)} ms`,
      ),
    )
    // The dashboard (apps/web/dist, served by the API at `/`): `npm run build:web`, scripts/web-build.ts.
    .then(() => {
      const web = performance.now();
      buildWeb();
      console.log(`built apps/web/dist in ${Math.round(performance.now() - web)} ms`);
    })
    .catch((err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    });
}
