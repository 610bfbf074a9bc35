import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { productionSources, REPO_ROOT } from '@mailrail/testing/source-files';

// A comment that explains a rule points to the repository's own documents (docs/*.md, README.md)
// or says it inline: a reader has nothing else.

it('cites only documents that are in the repository', () => {
  const missing: string[] = [];
  for (const f of productionSources()) {
    // Words ending in .md (a trailing period, colon or bracket is the sentence's, not the name's).
    const cited = f.text
      .split(/[^\w./-]/)
      .map((w) => w.replace(/\.$/, ''))
      .filter((w) => w.endsWith('.md'));
    for (const name of cited) {
      if (!existsSync(join(REPO_ROOT, name))) missing.push(`${f.path}: ${name}`);
    }
  }
  expect(missing).toEqual([]);
});

it('cites no section of an outside document', () => {
  const outside = /§|\breference §|\binterface rules?\b/i;
  expect(
    productionSources()
      .filter((f) => outside.test(f.text))
      .map((f) => f.path),
  ).toEqual([]);
});
