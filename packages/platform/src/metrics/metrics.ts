import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueFactory } from '../queue/queues';

/**
 * The Prometheus series of one process. Each process builds its own registry (no global
 * singleton), so tests and several apps in one process do not collide.
 */
export function createMetrics(processName: 'api' | 'worker' | 'smtp') {
  const registry = new Registry();
  registry.setDefaultLabels({ process: processName });
  collectDefaultMetrics({ register: registry, prefix: 'mailrail_' });

  return {
    registry,
    httpRequests: new Counter({
      name: 'mailrail_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'mailrail_http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    queueJobs: new Gauge({
      name: 'mailrail_queue_jobs',
      help: 'Jobs per queue and state, read at scrape time',
      labelNames: ['queue', 'state'],
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: 'mailrail_job_duration_seconds',
      help: 'Worker job durations by queue and outcome',
      labelNames: ['queue', 'outcome'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    emailsByStatus: new Counter({
      name: 'mailrail_emails_total',
      help: 'Email status changes made by this process, by new status',
      labelNames: ['status'],
      registers: [registry],
    }),
    sesErrors: new Counter({
      name: 'mailrail_ses_errors_total',
      help: 'SES errors by error name',
      labelNames: ['name'],
      registers: [registry],
    }),
    snsRejected: new Counter({
      name: 'mailrail_sns_rejected_total',
      help: 'SNS posts refused by POST /api/ses/notifications, by reason (unknown-topic, stale, bad-signature...)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    authFailures: new Counter({
      name: 'mailrail_auth_failures_total',
      help: 'API requests and SMTP AUTH commands refused before or at API key authentication, by reason (invalid-key, ip-blocked, bad-username)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    apiKeyRevocationsUnannounced: new Counter({
      name: 'mailrail_api_key_revocations_unannounced_total',
      help: 'Revoked API keys whose announcement over Redis failed: other replicas may accept them until API_KEY_CACHE_SECONDS pass',
      registers: [registry],
    }),
    sendPermits: new Counter({
      name: 'mailrail_send_permits_total',
      help: 'Send permits (one per recipient) asked of the shared SES rate limiter, by lane and result (granted; refused: the job waits in its queue; late: granted, but the job woke up too late for it and asked again)',
      labelNames: ['lane', 'result'],
      registers: [registry],
    }),
    requestLogDropped: new Counter({
      name: 'mailrail_request_log_dropped_total',
      help: 'Request log entries dropped: the buffer was full (REQUEST_LOG_BUFFER) or their batch failed to write',
      registers: [registry],
    }),
    rateLimitWaits: new Counter({
      name: 'mailrail_rate_limit_waits_total',
      help: 'Times a send queue was slowed down by the SES rate limit or SES throttling',
      labelNames: ['queue', 'reason'],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized', 'waiting-children'] as const;

/** Reads queue depths into the gauge; called right before a scrape is answered. */
export async function collectQueueDepths(metrics: Metrics, queues: QueueFactory, names: string[]): Promise<void> {
  await Promise.all(
    names.map(async (name) => {
      const counts = await queues.get(name).getJobCounts(...JOB_STATES);
      for (const state of JOB_STATES) metrics.queueJobs.set({ queue: name, state }, counts[state] ?? 0);
    }),
  );
}
