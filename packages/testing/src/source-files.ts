import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** The repository root (this file is packages/testing/src/source-files.ts). */
export const REPO_ROOT = resolve(__dirname, '../../..');

/**
 * The production TypeScript of both apps and the packages, as { path (from the repo root), text }:
 * no tests, no test kits, no generated Prisma client. For tests that hold the tree to a rule
 * ("this is defined once").
 */
export function productionSources(): { path: string; text: string }[] {
  const roots = ['apps', 'packages'].map((r) => join(REPO_ROOT, r));
  const out: { path: string; text: string }[] = [];
  for (const root of roots) {
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      const full = join(entry.parentPath, entry.name);
      const path = relative(REPO_ROOT, full);
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts') || entry.name.endsWith('.d.ts')) continue;
      if (/(^|\/)(node_modules|generated|dist|testing)\//.test(path)) continue;
      out.push({ path, text: readFileSync(full, 'utf8') });
    }
  }
  return out;
}

/** Every test file (`*.test.ts`) under apps/, packages/ and test/, as paths from the repo root, sorted. */
export function testFilePaths(): string[] {
  const out: string[] = [];
  for (const root of ['apps', 'packages', 'test']) {
    for (const entry of readdirSync(join(REPO_ROOT, root), { recursive: true, withFileTypes: true })) {
      const path = relative(REPO_ROOT, join(entry.parentPath, entry.name));
      if (entry.isFile() && path.endsWith('.test.ts') && !/(^|\/)node_modules\//.test(path)) out.push(path);
    }
  }
  return out.sort();
}
