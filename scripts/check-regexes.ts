// `npm run lint:recheck`: a second opinion on every regex literal of the production code (apps,
// packages, scripts; not tests, test helpers or benchmarks, whose regexes see only their own data).
// recheck (npm `recheck`, its Linux binary, offline) analyses each one for exponential or polynomial
// backtracking, including the search from every start position that eslint-plugin-regexp's
// no-super-linear-move missed in /<body[^>]*>/i. A regex it calls vulnerable, or cannot decide in
// 10 s, fails the run unless its line carries a reasoned
// `eslint-disable-line regexp/no-super-linear-backtracking`. About a minute on two busy cores.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { check } from 'recheck';

const root = path.resolve(__dirname, '..');
const DIRS = ['apps', 'packages', 'scripts'];
const SKIP = /node_modules|[/\\](?:dist|\.dist-[^/\\]*|generated|testing)[/\\]|\.test\.ts$/;

function* tsFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (SKIP.test(full)) continue;
    if (statSync(full).isDirectory()) yield* tsFiles(full);
    else if (full.endsWith('.ts') || full.endsWith('.tsx')) yield full;
  }
}

interface Found {
  where: string;
  source: string;
  flags: string;
}

function regexesIn(file: string): Found[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = text.split('\n');
  const out: Found[] = [];
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(sf);
      const slash = literal.lastIndexOf('/');
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      if (!lines[line].includes('eslint-disable-line regexp/no-super-linear-backtracking')) {
        out.push({ where: `${path.relative(root, file)}:${line + 1}`, source: literal.slice(1, slash), flags: literal.slice(slash + 1) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

async function main() {
  const found = DIRS.flatMap((d) => [...tsFiles(path.join(root, d))].flatMap(regexesIn));
  const bad: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < found.length) {
        const f = found[next++];
        const r = await check(f.source, f.flags, { timeout: 10_000 });
        if (r.status === 'vulnerable')
          bad.push(`${f.where} /${f.source}/${f.flags}: ${r.complexity.summary}, attack ${JSON.stringify(r.attack.pattern)}`);
        else if (r.status === 'unknown') bad.push(`${f.where} /${f.source}/${f.flags}: not decided (${r.error.kind})`);
      }
    }),
  );
  console.log(`recheck: ${found.length} regexes, ${bad.length} flagged`);
  for (const b of bad.sort()) console.log(`  ${b}`);
  process.exit(bad.length ? 1 : 0);
}

void main();
