// Which test files run again on a Redis Cluster (`npm run test:cluster`, docs/redis.md, "The test
// suite on a cluster"). A file whose behaviour depends on Redis topology is on CLUSTER_TESTS:
// BullMQ queues and workers, Lua scripts and multi-key commands (hash tags, CROSSSLOT), the shared
// SES rate limiter, per-team and per-IP windows, idempotency keys, locks and semaphores (the
// budgets), the sweeper, pub/sub (API-key revocation), periodic jobs, whole stacks end to end. A
// file that only reaches Redis in passing (an HTTP CRUD test through the API harness, whose Redis
// use another listed file covers) is on TOPOLOGY_INDEPENDENT, with the reason. When in doubt, a
// file goes on the cluster list. test/structure/redis-topology.test.ts fails when a test file that
// creates Redis clients or queues (itself, through a harness or kit, through a module it imports, or
// by starting an app's process) is on neither list, is on both, or a listed file is gone.
// test/scale/ has its own stage.

export const CLUSTER_TESTS: readonly string[] = [
  // The send path: enqueue (fair priorities), idempotency keys, the accept lane, scheduling.
  'apps/api/src/emails/accept-lane.test.ts',
  'apps/api/src/emails/batch.test.ts',
  'apps/api/src/emails/email-committer.test.ts',
  'apps/api/src/emails/idempotency.test.ts',
  'apps/api/src/emails/manage.test.ts',
  'apps/api/src/emails/send.test.ts',
  'apps/api/src/emails/team-domains.test.ts',
  'apps/api/src/contacts/double-opt-in.test.ts',
  // Limits, windows, revocation over pub/sub, sessions and throttles in Redis.
  'apps/api/src/http/auth-cache.test.ts',
  'apps/api/src/http/auth-failure-burst.test.ts',
  'apps/api/src/http/http.test.ts',
  'apps/api/src/http/key-scope-matrix.test.ts',
  'apps/api/src/dashboard/auth/auth.test.ts',
  'apps/api/src/dashboard/auth/throttle-concurrency.test.ts',
  'packages/domain/src/teams/api-key-auth.test.ts',
  'packages/platform/src/redis/fixed-window.test.ts',
  'packages/platform/src/redis/script.test.ts',
  'packages/platform/src/redis/client.test.ts',
  'packages/testing/src/redis.test.ts',
  // Budgets (redis-semaphore) and the queues of heavy work.
  'packages/platform/src/budgets/budget-gate.test.ts',
  'apps/api/src/contacts/export-budget.test.ts',
  'apps/api/src/segments/segment-budget.test.ts',
  // A filter stopped by its timeout gives its budget place back.
  'apps/api/src/segments/segment-timeout.test.ts',
  // The pre-send check counts the audience under the segment budget.
  'apps/api/src/campaigns/pre-send.test.ts',
  // Dashboard instance routes: the test email goes through the send path's intake and queue.
  'apps/api/src/dashboard/instance/instance.test.ts',
  'apps/api/src/campaigns/campaign-ops.test.ts',
  'apps/api/src/campaigns/campaigns.test.ts',
  'apps/api/src/contact-imports/contact-imports.test.ts',
  'apps/api/src/contact-imports/import-caps.test.ts',
  'apps/api/src/domains/domains.test.ts',
  'apps/api/src/webhooks/webhooks.test.ts',
  'apps/api/src/ses-notifications/ses-notifications.test.ts',
  // Queue depths in /metrics, Redis in /ready, stopping with jobs in flight.
  'apps/api/src/ops/ops.test.ts',
  'apps/api/src/shutdown.test.ts',
  // The SMTP relay: AUTH limits, per-team limits, the send path, Redis unavailable, shutdown.
  'apps/smtp/src/auth-failure-burst.test.ts',
  'apps/smtp/src/main.test.ts',
  'apps/smtp/src/relay.test.ts',
  'apps/smtp/src/shutdown.test.ts',
  'apps/smtp/src/tenant-limits.test.ts',
  'apps/smtp/src/unavailable.test.ts',
  // The worker: every queue, lock, limiter, the sweeper and the periodic jobs.
  'apps/worker/src/campaigns/campaign-crash.test.ts',
  'apps/worker/src/campaigns/campaign-engine.test.ts',
  'apps/worker/src/campaigns/campaign-preparation.test.ts',
  'apps/worker/src/campaigns/campaign-ramp-crash.test.ts',
  'apps/worker/src/campaigns/campaign-ramp.test.ts',
  'apps/worker/src/campaigns/campaign-skipped-webhooks.test.ts',
  'apps/worker/src/campaigns/campaign-events.test.ts',
  'apps/worker/src/contact-imports/contact-import.test.ts',
  'apps/worker/src/contact-imports/import-fairness.test.ts',
  'apps/worker/src/domains/domain-verification.test.ts',
  'apps/worker/src/main.test.ts',
  'apps/worker/src/metrics-server.test.ts',
  'apps/worker/src/periodic/periodic-jobs.test.ts',
  'apps/worker/src/send/acceptance-committer.test.ts',
  'apps/worker/src/send/claim-committer.test.ts',
  'apps/worker/src/send/fair-sends.test.ts',
  'apps/worker/src/send/in-doubt.test.ts',
  'apps/worker/src/send/rate-limits.test.ts',
  'apps/worker/src/send/send-email.test.ts',
  'apps/worker/src/send/send-groups.test.ts',
  'apps/worker/src/send/send-pacing.test.ts',
  'apps/worker/src/send/send-worker.test.ts',
  'apps/worker/src/send/sweep-unsent-emails.test.ts',
  'apps/worker/src/ses-events/register.test.ts',
  'apps/worker/src/webhooks/webhook-delivery.test.ts',
  // Whole stacks: API, worker and relay together.
  'test/e2e/automation-triggers.test.ts',
  'test/e2e/automations.test.ts',
  'test/e2e/dashboard-mail.test.ts',
  'test/e2e/lifecycle.test.ts',
  'test/e2e/mid-campaign-suppression.test.ts',
  'test/e2e/scheduling.test.ts',
  'test/e2e/segment-campaign.test.ts',
  'test/e2e/engagement-segments.test.ts',
  'test/e2e/ses-event-simulator.test.ts',
  'test/e2e/smtp-relay.test.ts',
  // The timing checks (test/timing/README.md): scheduled sends (delayed jobs, the sweeper), the
  // shared SES rate limiter at SES.
  'test/timing/scheduled-sends.test.ts',
  'test/timing/send-rate.test.ts',
];

export const TOPOLOGY_INDEPENDENT: readonly string[] = [
  // HTTP CRUD and reads through the API harness: PostgreSQL decides; their Redis use (the team
  // rate limit, the key cache) is the listed http/ and api-key-auth tests'.
  'apps/api/src/addresses/addresses.test.ts',
  'apps/api/src/automations/automations.test.ts',
  'apps/api/src/analytics/analytics.test.ts',
  'apps/api/src/contact-books/contact-books.test.ts',
  'apps/api/src/contacts/contacts.test.ts',
  'apps/api/src/contacts/export-consistency.test.ts',
  'apps/api/src/contacts/list-and-export.test.ts',
  'apps/api/src/contacts/unsubscribe.test.ts',
  'apps/api/src/dashboard/access-matrix.test.ts',
  'apps/api/src/dashboard/email-log/email-log.test.ts',
  'apps/api/src/dashboard/secrets.test.ts',
  'apps/api/src/dashboard/team/team-features.test.ts',
  'apps/api/src/emails/list-stream.test.ts',
  // Custom events: their eventIds live in PostgreSQL only (EventKey), not in Redis.
  'apps/api/src/events/events.test.ts',
  'apps/api/src/events/builtin-events.test.ts',
  'apps/api/src/request-log/list-logs.test.ts',
  'apps/api/src/request-log/record-requests.test.ts',
  'apps/api/src/segments/segment-in-use.test.ts',
  'apps/api/src/segments/segments.test.ts',
  'apps/api/src/segments/typed-properties.test.ts',
  'apps/api/src/contact-properties/contact-properties.test.ts',
  'apps/api/src/suppressions/suppressions.test.ts',
  'apps/api/src/templates/templates.test.ts',
  // Answer shapes and input validation: the same whatever stores the keys.
  'apps/api/src/http/errors.test.ts',
  'apps/api/src/http/hostile-input.test.ts',
  'apps/api/src/http/sender-domain-rule.test.ts',
  'apps/api/src/openapi/openapi.test.ts',
  'apps/api/src/testing/response-contract.test.ts',
  'apps/api/src/web/serve-dashboard.test.ts',
  'apps/smtp/src/header-rules.test.ts',
  'apps/smtp/src/request-log.test.ts',
  // The build and the dashboard in a browser: what they check is not Redis.
  'test/build/compiled-output.test.ts',
  'test/dashboard/audience-campaigns.test.ts',
  'test/dashboard/contact-properties.test.ts',
  'test/dashboard/dashboard.test.ts',
  'test/dashboard/email-editor.test.ts',
  'test/dashboard/engagement-segments.test.ts',
  'test/dashboard/events.test.ts',
  'test/dashboard/automations.test.ts',
  'test/dashboard/templates.test.ts',
  'test/dashboard/marketer-journey.test.ts',
  'test/e2e/campaign-editor.test.ts',
  // They make a client in passing, and what they check does not reach it: the admin CLI (its
  // revoke publishes once, to the Redis of its own environment, not the run's; it checks the
  // database), the api and worker processes refusing a configuration (they exit before connecting),
  // the bench kit (its email floor makes a client; the load generator is tested on a plain server).
  'packages/tools/src/cli/cli.test.ts',
  'packages/platform/src/config/config.test.ts',
  'test/bench/open-loop-load.test.ts',
  // Reputation alerts: PostgreSQL decides a crossing; the alert mail's send jobs are enqueued by the
  // email committer, whose Redis use the listed email-committer test covers.
  'apps/worker/src/reputation/reputation-alerts.test.ts',
  // A worker stopping while its one Redis is cut behind a proxy: skipped on a cluster run, where
  // every node would need a proxy (test/scale/redis-outage-close.test.ts has the cluster's close).
  'test/timing/worker-shutdown.test.ts',
];
