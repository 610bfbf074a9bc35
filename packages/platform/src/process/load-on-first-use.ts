import { createRequire } from 'node:module';

// A library that only some requests or jobs need is loaded by the first of them, not at start-up:
// an idle process then holds neither its source nor its compiled code (docs/worker.md, "Memory").
// Resolved from this file, i.e. from the repository's node_modules (in dist/ too, since the
// bundle keeps node_modules external). Type the result with `import type * as X from '<id>'`.
const requireModule = createRequire(__filename);

export function loadOnFirstUse<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireModule(id) as T);
}
