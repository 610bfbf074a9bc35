import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT, testFilePaths } from '@mailrail/testing/source-files';
import { CLUSTER_TESTS, TOPOLOGY_INDEPENDENT } from '../redis-topology';
import { inScaleStage } from '../stages';

// The cluster stage runs what clustering changes (issue 41 §2): every test file that creates Redis
// clients or queues, directly or through a harness, says whether its behaviour depends on Redis
// topology (test/redis-topology.ts). A new file on neither list fails here until someone decides.

// Calls that create Redis clients or queues.
const MAKES_REDIS = [/\b(createRedis|duplicateRedis|createQueueFactory|create(Base|Api|Worker|Smtp)Deps)\(/, /\bnew (Redis|Cluster)\(/];
// BullMQ's classes; worker_threads also has a Worker, so only in a module that imports bullmq.
const BULLMQ_CLASS = /\bnew (Queue|Worker|QueueEvents|FlowProducer)\(/;
// An app's process started by a child_process call: it makes its own clients and queues.
const APP_MAIN = /\bapps\/(api|worker|smtp|\$\{\w+\})\/src\/main\.ts\b/;
const CHILD_PROCESS = /\b(spawn|spawnSync|fork|execFile|execFileSync|spawnListening|withListening)\(/;
// The Redis test kits (the run's Redis and prefixes, a local cluster): importing one is using Redis.
const REDIS_KITS = ['packages/testing/src/redis.ts', 'packages/testing/src/redis-cluster.ts'];
// Where clients and queues are defined: importing them for a name (queueNames, scanTargets) creates
// nothing, and calling their factories is one of MAKES_REDIS.
const DEFINITIONS = [
  'packages/platform/src/redis/client.ts',
  'packages/platform/src/queue/queues.ts',
  'packages/platform/src/process/base-deps.ts',
];
// Kits are followed through their own imports (a kit built on the API harness makes what it makes);
// production modules are judged by their own text, or every test importing queueNames would count.
const isKit = (path: string) => /(^|\/)testing\//.test(path) || /^(test|bench)\//.test(path);

const makesRedis = (text: string) =>
  MAKES_REDIS.some((re) => re.test(text)) ||
  (BULLMQ_CLASS.test(text) && text.includes("from 'bullmq'")) ||
  (APP_MAIN.test(text) && CHILD_PROCESS.test(text));

/** The repo files `text` (at `path`) imports for a value (not `import type`), from the repo root. */
function valueImports(path: string, text: string): string[] {
  const out: string[] = [];
  // A static import or re-export (prettier puts them at the start of a line), then import() and require().
  const statics = [...text.matchAll(/^(?:import|export)\b([^'";]*)['"]([^'"\n]+)['"]/gm)].filter(([, what]) =>
    /^\s*$|\bfrom\s*$/.test(what),
  );
  const dynamics = [...text.matchAll(/\b(?:import|require)\(['"]([^'"\n]+)['"]\)/g)].map(([all, spec]) => [all, '', spec]);
  for (const [, what, spec] of [...statics, ...dynamics]) {
    const clause = what.replace(/\bfrom\s*$/, '').trim();
    if (clause.startsWith('type ')) continue;
    // import { type A, type B } names only types; import C, { type A } does not.
    const braced = clause.startsWith('{')
      ? clause
          .slice(1, clause.indexOf('}'))
          .split(',')
          .filter((n) => n.trim())
      : [];
    if (braced.length && braced.every((n) => n.trim().startsWith('type '))) continue;
    const alias = /^@mailrail\/(platform|domain|testing|tools)\/(.*)$/.exec(spec);
    const base = alias
      ? `packages/${alias[1]}/src/${alias[2]}`
      : spec.startsWith('.')
        ? relative(REPO_ROOT, join(REPO_ROOT, dirname(path), spec))
        : null;
    const file = base && [`${base}.ts`, `${base}/index.ts`, base].find((f) => f.endsWith('.ts') && existsSync(join(REPO_ROOT, f)));
    if (file) out.push(file);
  }
  return out;
}

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

/** Whether a module creates Redis clients or queues itself, or (a kit) through the kits it imports. */
function moduleMakesRedis(path: string, seen = new Set<string>()): boolean {
  if (DEFINITIONS.includes(path) || seen.has(path)) return false;
  seen.add(path);
  const text = read(path);
  return makesRedis(text) || (isKit(path) && valueImports(path, text).some((m) => moduleMakesRedis(m, seen)));
}

/** Whether a test file creates Redis clients or queues: itself, through a Redis kit, or through a module it imports. */
function usesRedis(path: string, text = read(path)): boolean {
  if (makesRedis(text)) return true;
  const imported = valueImports(path, text);
  return imported.some((m) => REDIS_KITS.includes(m)) || imported.some((m) => moduleMakesRedis(m));
}

/** Test files under apps/, packages/ and test/ (not the scale stage's, test/stages.ts), from the repo root. */
const testFiles = () =>
  // test/structure/ reads the source (this file names the markers); it starts nothing.
  testFilePaths().filter((path) => !inScaleStage(path) && !path.startsWith('test/structure/'));

it('every test file that creates Redis clients or queues is on exactly one list', () => {
  const listed = new Set([...CLUSTER_TESTS, ...TOPOLOGY_INDEPENDENT]);
  expect(testFiles().filter((f) => !listed.has(f) && usesRedis(f))).toEqual([]);
  expect(CLUSTER_TESTS.filter((f) => TOPOLOGY_INDEPENDENT.includes(f))).toEqual([]);
  expect([...CLUSTER_TESTS, ...TOPOLOGY_INDEPENDENT].filter((f, i, all) => all.indexOf(f) !== i)).toEqual([]);
});

it('every listed file exists and is a test file the cluster run can match', () => {
  const wrong = [...CLUSTER_TESTS, ...TOPOLOGY_INDEPENDENT].filter(
    (f) => !f.endsWith('.test.ts') || inScaleStage(f) || !existsSync(join(REPO_ROOT, f)),
  );
  expect(wrong).toEqual([]);
});

it('recognises the ways a test file reaches Redis, and not a name or a type', () => {
  const at = 'apps/api/src/emails/x.test.ts';
  // Through the harnesses and kits, which create the clients and queues.
  expect(usesRedis(at, "import { startTestApi } from '../testing/api-harness';")).toBe(true);
  expect(usesRedis('apps/worker/src/x.test.ts', "import { startTestWorkerEnv } from './testing/worker-harness';")).toBe(true);
  expect(usesRedis('test/e2e/x.test.ts', "import { startStack } from '../faults/stack';")).toBe(true);
  expect(usesRedis(at, "import { testRedisPrefix } from '@mailrail/testing/redis';")).toBe(true);
  // Through a module that creates a client when called (the admin CLI's revoke publishes).
  expect(usesRedis('packages/tools/src/cli/x.test.ts', "import { runCli } from './main';")).toBe(true);
  // Directly, or by starting an app's process.
  expect(usesRedis(at, 'const redis = createRedis(config.redis);')).toBe(true);
  expect(usesRedis(at, "import { Queue } from 'bullmq';\nconst q = new Queue('send', { connection });")).toBe(true);
  expect(usesRedis(at, "spawn(process.execPath, ['--import', 'tsx', path.join(root, 'apps/smtp/src/main.ts')]);")).toBe(true);
  expect(usesRedis(at, "withListening({ command: process.execPath, args: ['--import', 'tsx', 'apps/api/src/main.ts'] }, use);")).toBe(true);
  // Not: a name or a type from where clients and queues are defined, worker_threads' Worker, pure code.
  expect(usesRedis(at, "import { queueNames } from '@mailrail/platform/queue/queues';")).toBe(false);
  expect(usesRedis(at, "import { createApiDeps } from '../deps';")).toBe(true);
  expect(usesRedis(at, "import type { ApiDeps } from '../deps';\nimport { type Redis } from '@mailrail/platform/redis/client';")).toBe(
    false,
  );
  expect(usesRedis(at, "import { Worker } from 'node:worker_threads';\nnew Worker(file);")).toBe(false);
  expect(usesRedis(at, "expect(scripts['dev:smtp']).toBe('node --import tsx apps/smtp/src/main.ts');")).toBe(false);
  expect(usesRedis(at, "import { parseAddress } from '@mailrail/domain/emails/address';")).toBe(false);
});
