import react from '@vitejs/plugin-react';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('../..', import.meta.url));

// `npm run dev -w apps/web`: the dashboard with hot reload on :5173, its /api calls proxied to the
// API (`npm run dev:api`, PORT or 3000), so the session cookie stays same-origin as in production.
const apiTarget = process.env.DASHBOARD_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;

/** Lists the source files the build bundled, so scripts/web-build.ts can tell when a build is stale. */
function recordInputs(): Plugin {
  let outDir = '';
  return {
    name: 'mailrail-record-inputs',
    apply: 'build',
    configResolved: (c) => void (outDir = path.resolve(c.root, c.build.outDir)),
    generateBundle() {
      const files = [...this.getModuleIds()]
        .filter((id) => path.isAbsolute(id) && !id.includes(`${path.sep}node_modules${path.sep}`))
        .map((id) => path.relative(root, id.split('?')[0]))
        .filter((f) => !f.startsWith('..'));
      mkdirSync(path.join(outDir, '.vite'), { recursive: true });
      writeFileSync(path.join(outDir, '.vite/inputs.json'), JSON.stringify([...new Set(files)].sort(), null, 1));
    },
  };
}

export default defineConfig({
  plugins: [react(), recordInputs()],
  // Wire vocabularies (email statuses, webhook event types…) come from their one definition in the shared packages.
  resolve: {
    alias: { '@mailrail/platform': path.join(root, 'packages/platform/src'), '@mailrail/domain': path.join(root, 'packages/domain/src') },
  },
  server: {
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
  build: {
    // The first-load budget check (scripts/web-bundle-size.ts) follows the manifest's imports.
    manifest: true,
    target: 'es2022',
    // Minified size; the budget that counts is 300 KB gzip of the first load's JavaScript.
    chunkSizeWarningLimit: 600,
  },
});
