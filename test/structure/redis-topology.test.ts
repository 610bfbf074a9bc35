import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '@mailrail/testing/source-files';
import { CLUSTER_TESTS, TOPOLOGY_INDEPENDENT } from '../redis-topology';

// The cluster stage runs what clustering changes (issue 41 §2): every test file that creates Redis
// clients or queues, directly or through a harness, says whether its behaviour depends on Redis
// topology (test/redis-topology.ts). A new file on neither list fails here until someone decides.

// Ways a test file reaches Redis: the clients and queues, and the kits that make them.
const REDIS_MARKERS = [
  'createRedis(',
  'createQueueFactory(',
  'new Queue(',
  'new Worker(',
  'api-harness',
  'worker-harness',
  'smtp-harness',
  'webhook-test-kit',
  "@mailrail/testing/redis'",
  'testRedis',
];

/** Test files under apps/, packages/ and test/ (not test/scale/, a stage of its own), from the repo root. */
function testFiles(): string[] {
  const out: string[] = [];
  for (const root of ['apps', 'packages', 'test']) {
    for (const entry of readdirSync(join(REPO_ROOT, root), { recursive: true, withFileTypes: true })) {
      const path = relative(REPO_ROOT, join(entry.parentPath, entry.name));
      if (!entry.isFile() || !path.endsWith('.test.ts') || /(^|\/)node_modules\//.test(path)) continue;
      if (path.startsWith('test/scale/') || path.startsWith('test/structure/')) continue;
      out.push(path);
    }
  }
  return out.sort();
}

const usesRedis = (text: string) => REDIS_MARKERS.some((m) => text.includes(m));

it('every test file that creates Redis clients or queues is on exactly one list', () => {
  const listed = new Set([...CLUSTER_TESTS, ...TOPOLOGY_INDEPENDENT]);
  const unlisted = testFiles().filter((f) => usesRedis(readFileSync(join(REPO_ROOT, f), 'utf8')) && !listed.has(f));
  expect(unlisted).toEqual([]);
  expect(CLUSTER_TESTS.filter((f) => TOPOLOGY_INDEPENDENT.includes(f))).toEqual([]);
  expect([...CLUSTER_TESTS, ...TOPOLOGY_INDEPENDENT].filter((f, i, all) => all.indexOf(f) !== i)).toEqual([]);
});

it('every listed file exists', () => {
  expect([...CLUSTER_TESTS, ...TOPOLOGY_INDEPENDENT].filter((f) => !existsSync(join(REPO_ROOT, f)))).toEqual([]);
});

it('recognises a file that reaches Redis through a harness, and one that does not', () => {
  expect(usesRedis("import { startTestApi } from '../testing/api-harness';")).toBe(true);
  expect(usesRedis("import { parseAddress } from './address';")).toBe(false);
});
