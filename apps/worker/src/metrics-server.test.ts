import crypto from 'node:crypto';
import { Registry } from 'prom-client';
import { startTestWorkerEnv, type TestWorkerEnv } from './testing/worker-harness';
import { startMetricsServer } from './metrics-server';

let env: TestWorkerEnv;
beforeAll(async () => {
  // A render serves scrapes for a minute here: the concurrency test below must not see it expire.
  env = await startTestWorkerEnv({ METRICS_TOKEN: 'scrape', METRICS_CACHE_MS: '60000' });
});
afterAll(async () => {
  await env.close();
});

it('serves the worker series: job durations, emails by status, SES errors by name, throttling waits, queue depths', async () => {
  await env.start();
  env.ses.failNext(1, { kind: 'throttle' });
  env.ses.setRule((req) => (req.destination.to.includes('bad@example.net') ? { kind: 'reject' } : undefined));
  const [ok, bad] = await env.createEmails([{ to: ['ok@example.net'] }, { to: ['bad@example.net'] }]);
  await env.waitFor(async () => (await env.email(ok)).latestStatus === 'SENT' && (await env.email(bad)).latestStatus === 'FAILED');

  const server = await startMetricsServer(env.deps, 0, '127.0.0.1');
  try {
    const url = `http://127.0.0.1:${(server!.address() as { port: number }).port}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    const text = await (await fetch(url, { headers: { Authorization: 'Bearer scrape' } })).text();
    expect(text).toMatch(/mailrail_emails_total\{status="SENT",process="worker"\} 1/);
    expect(text).toMatch(/mailrail_emails_total\{status="FAILED",process="worker"\} 1/);
    expect(text).toMatch(/mailrail_ses_errors_total\{name="MessageRejected",process="worker"\} 1/);
    expect(text).toMatch(/mailrail_ses_errors_total\{name="ThrottlingException",process="worker"\} 1/);
    expect(text).toMatch(
      /mailrail_rate_limit_waits_total\{queue="send-transactional-us-east-1",reason="ses-throttling",process="worker"\} 1/,
    );
    expect(text).toMatch(/mailrail_job_duration_seconds_count\{[^}]*queue="send-transactional-us-east-1"[^}]*outcome="sent"[^}]*\} 1/);
    expect(text).toMatch(/mailrail_queue_jobs\{queue="send-marketing-us-east-1",state="waiting",process="worker"\} 0/);
    expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);
  } finally {
    server?.close();
  }
});

it('compares the metrics token in constant time, whatever the length of the guess', async () => {
  const server = await startMetricsServer(env.deps, 0, '127.0.0.1');
  const compare = jest.spyOn(crypto, 'timingSafeEqual');
  try {
    const url = `http://127.0.0.1:${(server!.address() as { port: number }).port}/metrics`;
    for (const guess of ['s', 'scrapE', 'scrape-and-more']) {
      expect((await fetch(url, { headers: { Authorization: `Bearer ${guess}` } })).status).toBe(401);
    }
    expect(compare).toHaveBeenCalledTimes(3);
    expect((await fetch(url, { headers: { Authorization: 'Bearer scrape' } })).status).toBe(200);
  } finally {
    compare.mockRestore();
    server?.close();
  }
});

it('50 concurrent scrapes share one render (the rule of the API and the SMTP relay: core scrape-cache.ts)', async () => {
  const server = await startMetricsServer(env.deps, 0, '127.0.0.1');
  const renders = jest.spyOn(Registry.prototype, 'metrics');
  try {
    const url = `http://127.0.0.1:${(server!.address() as { port: number }).port}/metrics`;
    const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(url, { headers: { Authorization: 'Bearer scrape' } })));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    expect(renders).toHaveBeenCalledTimes(1);
  } finally {
    renders.mockRestore();
    server?.close();
  }
});
