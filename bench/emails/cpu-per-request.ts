// CPU per accepted email, the figure that survives a loaded machine: the compiled API (run
// `npm run build` first) and the plain floor each take a fixed number of requests, alternately,
// and each server's CPU time (user + system, from /proc) is divided by the requests it answered.
// Also counts PostgreSQL transactions per request (pg_stat_database.xact_commit of the bench
// database), which shows how well group commit combines requests.
//   npx tsx bench/emails/cpu-per-request.ts [--requests 20000] [--rounds 3] [--connections 32] [--batch] [--env K=V] [--baseline old/dist/api/main.js] [--baseline-env K=V] [--profile]
// --baseline also runs another build of the API (e.g. main's, copied aside) in the same rounds, to
// measure one change's effect against the load of the moment; --baseline-env (repeatable) sets the
// baseline's settings only (e.g. --baseline dist/api/main.js --baseline-env LOG_LEVEL=info).
// --profile writes a V8 CPU profile of the API (these requests only, no batch or floor work in it)
// to bench/out/profile; summarize it with bench/emails/profile-summary.ts.
import path from 'node:path';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';
import {
  alternate,
  benchEmail,
  envArgs,
  measure,
  numberArg,
  root,
  setUpEmailBench,
  startServer,
  stopServer,
  stringArg,
  type BenchServer,
  type Figures,
  type Load,
} from './bench-kit';

const apiEnv = envArgs('env');
const BATCH = process.argv.includes('--batch');
const REQUESTS = numberArg('requests', BATCH ? 300 : 20_000);
const ROUNDS = numberArg('rounds', 3);
const CONNECTIONS = numberArg('connections', BATCH ? 16 : 32);
const BASELINE = stringArg('baseline');
const baselineEnv = envArgs('baseline-env');

async function main() {
  const bench = await setUpEmailBench('cpu');
  const profile = process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${path.join(root, 'bench/out/profile')}`] : [];
  const servers: BenchServer[] = [];
  try {
    const plain = await startServer('plain floor', ['--import', 'tsx', 'bench/emails/plain-floor.ts'], bench.env, '/nothing');
    servers.push(plain);
    // With the young-generation flag production passes (memory-flags.ts).
    const api = await startServer(
      'API',
      [...profile, youngGenerationFlag('api'), 'dist/api/main.js'],
      { ...bench.env, ...apiEnv },
      '/health',
    );
    servers.push(api);
    const base = BASELINE
      ? await startServer('baseline API', [youngGenerationFlag('api'), BASELINE], { ...bench.env, ...apiEnv, ...baselineEnv }, '/health')
      : undefined;
    if (base) servers.push(base);
    const load: Load = {
      path: `/api/v1/emails${BATCH ? '/batch' : ''}`,
      headers: bench.headers,
      body: JSON.stringify(BATCH ? Array.from({ length: 100 }, () => benchEmail) : benchEmail),
      connections: CONNECTIONS,
      emailsPerRequest: BATCH ? 100 : 1,
    };
    const floorLoad: Load = { ...load, path: `/floor${BATCH ? '/batch' : ''}` };
    const runs = (amount: number): Record<string, () => Promise<Figures>> => ({
      plain: () => measure(plain, { ...floorLoad, amount }, bench.commits),
      api: () => measure(api, { ...load, amount }, bench.commits),
      ...(base ? { base: () => measure(base, { ...load, amount }, bench.commits) } : {}),
    });
    // Warm-up (JIT, pools), a quarter of a round.
    await alternate(1, runs(Math.ceil(REQUESTS / 4)));
    const rounds = await alternate(ROUNDS, runs(REQUESTS));
    console.log(
      `| round | API CPU µs/email | plain floor CPU µs/email | API/floor CPU | API pg tx/request | API p99 ms | failed | baseline CPU µs/email | baseline/floor CPU |\n|---|---|---|---|---|---|---|---|---|`,
    );
    for (let i = 0; i < ROUNDS; i++) {
      const [f, a, b] = [rounds.plain[i], rounds.api[i], rounds.base?.[i]];
      const bad = (x: Figures | undefined) => (x ? x.non2xx + x.errors : 0);
      const baseCols = b
        ? ` ${b.serverCpuMicrosPerEmail} | ${(b.serverCpuMicrosPerEmail / f.serverCpuMicrosPerEmail).toFixed(2)} |`
        : ' | |';
      console.log(
        `| ${i + 1} | ${a.serverCpuMicrosPerEmail} | ${f.serverCpuMicrosPerEmail} | ${(a.serverCpuMicrosPerEmail / f.serverCpuMicrosPerEmail).toFixed(2)} | ${a.txPerRequest?.toFixed(2)} | ${a.p99} | ${bad(a) + bad(f) + bad(b)} |${baseCols}`,
      );
    }
  } finally {
    for (const s of servers) await stopServer(s);
    await bench.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
