// CSV import benchmark: a 1,000,000-row file imported end to end, through the API (multipart
// upload streamed into PostgreSQL) and the worker (the contact-imports job), the worker running as
// its own process so its RSS is its own, and compiled as deployed (`npm run build`: under tsx the
// TypeScript compiler alone holds about 100 MB more). Beside it, in the same run, the floor: psql's \copy of the
// same file into a scratch table with no index (moving the bytes into PostgreSQL and nothing else).
//   npx tsx bench/audience/import.ts [--rows 1000000]
// Targets (issue 20): ≤ 60 s end to end on 2 cores, worker RSS ≤ 256 MB.
import { spawn, execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync, createReadStream } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { createApiDeps } from '../../apps/api/src/deps';
import { buildAll } from '../../scripts/build';
import { outDir, writeResult } from '../report-kit';
import { cpuSeconds, procStatusMb } from '../process-stats';
import { startBenchApi } from '../bench-api';

const root = path.resolve(__dirname, '../..');
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const ROWS = arg('rows', 1_000_000);
const BAD_EVERY = 10_000; // one row in 10,000 has a broken address: the rejects path is exercised too

/** CPU seconds so far of the database's PostgreSQL backends (the pools' connections live through the run). */
async function postgresCpuSeconds(deps: ReturnType<typeof createApiDeps>): Promise<number> {
  const rows = await deps.db.$queryRawUnsafe<{ pid: number }[]>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  let sum = 0;
  for (const { pid } of rows) {
    const seconds = cpuSeconds(pid);
    if (!Number.isNaN(seconds)) sum += seconds; // NaN: a backend that ended
  }
  return sum;
}
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** A realistic export: address, names, company, city, plan, a date; about 100 bytes a row. */
async function writeCsv(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  const cities = ['Oslo', 'Lyon', 'São Paulo', 'Kraków', 'Osaka', 'Austin'];
  out.write('Email,First Name,Last Name,Company,City,Plan,Signed up\n');
  let buf = '';
  for (let i = 0; i < rows; i++) {
    const email = i % BAD_EVERY === 7 ? `broken${i}@@example.com` : `subscriber${i}@mail${i % 97}.example.com`;
    buf += `${email},First${i},Last${i},"Company ${i % 5000}, Ltd",${cities[i % cities.length]},${i % 3 ? 'free' : 'pro'},2025-${String((i % 12) + 1).padStart(2, '0')}-15\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  out.end(buf);
  await new Promise<void>((r) => out.once('finish', () => r()));
}

/** POST multipart/form-data with the file streamed from disk; answers status and body. */
function uploadFile(url: string, auth: string, file: string, fields: Record<string, string>) {
  const boundary = `----mailrailbench${Date.now()}`;
  const pre =
    Object.entries(fields)
      .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="contacts.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const post = `\r\n--${boundary}--\r\n`;
  const length = Buffer.byteLength(pre) + statSync(file).size + Buffer.byteLength(post);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(length) },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.write(pre);
    const stream = createReadStream(file);
    stream.on('error', reject);
    stream.on('end', () => req.end(post));
    stream.pipe(req, { end: false });
  });
}

async function main() {
  const api = await startBenchApi({ CONTACT_IMPORT_MAX_MB: '512' });
  const { databaseUrl, prefix, config, deps, base } = api;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mailrail-import-bench-'));
  const file = path.join(dir, 'contacts.csv');
  const dist = path.join(outDir, 'import-dist');
  await buildAll(dist);
  const worker = spawn(process.execPath, [path.join(dist, 'worker/main.js')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: config.REDIS_URL,
      REDIS_PREFIX: prefix,
      SES_ENDPOINT: 'http://127.0.0.1:9',
      SES_RATE_LIMIT: '1000',
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      // e.g. BENCH_WORKER_NODE_OPTIONS=--max-old-space-size=128 to see the worker under a heap cap.
      NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    console.log(`machine: nproc=${os.cpus().length}, ${os.cpus()[0].model}, node ${process.version}; load average at start: ${load()}`);
    let t = performance.now();
    await writeCsv(file, ROWS);
    const bytes = statSync(file).size;
    console.log(`wrote ${ROWS} rows, ${(bytes / 1048576).toFixed(1)} MB, in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    // Floor: the same file into PostgreSQL with COPY, nothing checked, no index.
    execFileSync('psql', [
      databaseUrl,
      '-qc',
      'CREATE TABLE import_floor (email text, first text, last text, company text, city text, plan text, signed text)',
    ]);
    t = performance.now();
    execFileSync('psql', [databaseUrl, '-qc', `\\copy import_floor FROM '${file}' WITH (FORMAT csv, HEADER true)`]);
    const copyS = (performance.now() - t) / 1000;
    execFileSync('psql', [databaseUrl, '-qc', 'DROP TABLE import_floor']);
    console.log(`floor: psql \\copy of the file into an unindexed table: ${copyS.toFixed(1)} s`);

    const team = await createTeam(deps.db, 'bench');
    const { apiKey } = await createApiKey(deps.db, { teamId: team.id });
    const auth = `Bearer ${apiKey}`;
    const book = await deps.db.contactBook.create({ data: { id: `bench-import-${Date.now()}`, teamId: team.id, name: 'Import bench' } });
    // The worker has long started (the file and the floor took seconds); its RSS has settled.
    await sleep(1000);
    const idleRss = procStatusMb(worker.pid!, 'VmRSS');
    const cpu0 = cpuSeconds(worker.pid!);
    const pg0 = await postgresCpuSeconds(deps);

    let peakRss = idleRss;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, procStatusMb(worker.pid!, 'VmRSS'));
        await sleep(100);
      }
    })();
    t = performance.now();
    const res = await uploadFile(`${base}/api/v1/contactBooks/${book.id}/imports`, auth, file, { onExisting: 'skip' });
    const uploadS = (performance.now() - t) / 1000;
    if (res.status !== 202) throw new Error(`upload: ${res.status} ${res.body.slice(0, 300)}`);
    const importId = (JSON.parse(res.body) as { id: string }).id;
    console.log(`upload (202 Accepted) after ${uploadS.toFixed(1)} s`);
    let view: Record<string, unknown> = {};
    for (;;) {
      view = (await (
        await fetch(`${base}/api/v1/contactBooks/${book.id}/imports/${importId}`, { headers: { Authorization: auth } })
      ).json()) as Record<string, unknown>;
      if (view.status === 'completed' || view.status === 'failed') break;
      await sleep(250);
    }
    const endToEndS = (performance.now() - t) / 1000;
    sampling = false;
    await sampler;
    const workerCpuS = cpuSeconds(worker.pid!) - cpu0;
    const postgresCpuS = (await postgresCpuSeconds(deps)) - pg0;
    const jobS = (new Date(String(view.finishedAt)).getTime() - new Date(String(view.startedAt)).getTime()) / 1000;
    if (view.status !== 'completed') throw new Error(`import ${view.status}: ${String(view.error)}`);
    const expectedRejects = Math.floor((ROWS - 8) / BAD_EVERY) + 1;
    if (view.created !== ROWS - expectedRejects || view.rejected !== expectedRejects)
      throw new Error(`unexpected counters ${JSON.stringify(view)}`);

    console.log(`import of ${ROWS} rows: ${JSON.stringify({ created: view.created, rejected: view.rejected })}`);
    console.log(`| end to end (upload start → completed seen by polling) | ${endToEndS.toFixed(1)} s (target ≤ 60 s) |`);
    console.log(`| upload through the API into PostgreSQL | ${uploadS.toFixed(1)} s (${(bytes / 1048576 / uploadS).toFixed(0)} MB/s) |`);
    console.log(`| worker job (startedAt → finishedAt) | ${jobS.toFixed(1)} s, ${Math.round(ROWS / jobS)} rows/s |`);
    console.log(`| worker CPU during the import | ${workerCpuS.toFixed(1)} s (${((workerCpuS * 1e6) / ROWS).toFixed(1)} µs per row) |`);
    console.log(
      `| PostgreSQL backends' CPU during upload and import | ${postgresCpuS.toFixed(1)} s (${((postgresCpuS * 1e6) / ROWS).toFixed(1)} µs per row) |`,
    );
    console.log(`| worker RSS: idle, peak | ${idleRss.toFixed(0)} MB, ${peakRss.toFixed(0)} MB (target ≤ 256 MB) |`);
    console.log(`| floor: psql \\copy, same file, unindexed table | ${copyS.toFixed(1)} s |`);
    console.log(`worker NODE_OPTIONS: ${process.env.BENCH_WORKER_NODE_OPTIONS ?? '(none)'}; load average at end: ${load()}`);
    writeResult(
      'import',
      { importEndToEndS: endToEndS, importWorkerPeakRssMb: peakRss, importUploadS: uploadS, importJobS: jobS, importCopyFloorS: copyS },
      { rows: ROWS, bytes, workerCpuS, postgresCpuS, idleRss, workerNodeOptions: process.env.BENCH_WORKER_NODE_OPTIONS ?? null },
    );
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
    rmSync(dist, { recursive: true, force: true });
    await api.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
