// How much API key verification adds to a request: the auth middleware alone, called in process
// against the real database, with the key cached (the steady state) and uncached (a cold replica
// or API_KEY_CACHE_SECONDS=0). Run: npx tsx bench/auth/key-verification.ts
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Request, Response } from 'express';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { loadConfig } from '@mailrail/platform/config/load';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { createApiDeps, closeApiDeps } from '../../apps/api/src/deps';
import { createAuth } from '../../apps/api/src/http/auth';
import { writeResult } from '../report-kit';

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(label: string, n: number, call: () => Promise<void>) {
  const times: number[] = [];
  for (let i = 0; i < 200; i++) await call(); // warm-up
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / n;
  console.log(
    `| ${label} | ${n} | ${(mean * 1000).toFixed(1)} µs | ${(percentile(times, 50) * 1000).toFixed(1)} µs | ${(percentile(times, 99) * 1000).toFixed(1)} µs |`,
  );
  return { meanMs: mean, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
}

async function main() {
  await prepareTemplateDatabase();
  const url = await createTestDatabase();
  const figures: Record<string, number> = {};
  try {
    for (const cacheSeconds of ['10', '0']) {
      const deps = createApiDeps(
        loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', API_KEY_CACHE_SECONDS: cacheSeconds, REDIS_PREFIX: 'bench_auth' }),
      );
      const team = await createTeam(deps.db, 'bench');
      const { apiKey } = await createApiKey(deps.db, { teamId: team.id });
      const auth = createAuth(deps);
      // The client's address is part of the verification (its failed attempts are limited per address).
      const req = { headers: { authorization: `Bearer ${apiKey}` }, originalUrl: '/api/v1/emails', ip: '127.0.0.1' } as unknown as Request;
      const call = () =>
        new Promise<void>((resolve, reject) => auth.middleware(req, {} as Response, (err?: unknown) => (err ? reject(err) : resolve())));
      if (cacheSeconds === '10') {
        console.log(
          `machine: ${os.cpus().length} cores (${os.cpus()[0].model}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}\n`,
        );
        console.log('| key verification | calls | mean | p50 | p99 |\n|---|---|---|---|---|');
      }
      const cached = cacheSeconds === '10';
      const { meanMs, p99Ms } = await measure(
        cached ? 'cached (steady state)' : 'uncached (database lookup)',
        cached ? 100_000 : 5_000,
        call,
      );
      Object.assign(figures, cached ? { cachedMeanMs: meanMs, cachedP99Ms: p99Ms } : { uncachedMeanMs: meanMs, uncachedP99Ms: p99Ms });
      auth.close();
      await closeApiDeps(deps);
    }
    writeResult('auth', figures);
  } finally {
    await dropDatabase(url);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
