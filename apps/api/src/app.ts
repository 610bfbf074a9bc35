import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import proxyaddr from 'proxy-addr';
import { createMetrics, type Metrics } from '@mailrail/platform/metrics/metrics';
import type { ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import type { ApiDeps } from './deps';
import { subscriptionPages } from './contacts/subscription-pages';
import { healthRoutes } from './health/routes';
import { sesNotificationRoutes, type SesNotificationOptions } from './ses-notifications/routes';
import { createAuth } from './http/auth';
import { errorHandler, notFoundHandler } from './http/errors';
import { createApplyRateLimit, createRateLimit } from './http/rate-limit';
import { createIdentityPort } from '@mailrail/domain/ses-identity/choose-adapter';
import { emailAcceptLane } from './emails/accept-lane';
import { routerOf } from './http/api-route';
import { bindPublicApi } from './public-api';
import { requestLogger } from './http/request-log';
import { rejectUnsafeUrl } from './http/unsafe-text';
import { setBaseSecurityHeaders } from './http/security-headers';
import { metricsEndpoint, recordHttpMetrics } from './ops/metrics';
import { openApiRoutes } from './openapi/routes';
import { QUEUE_DASHBOARD_PATH, queueDashboard } from './ops/queue-dashboard';
import { dashboardRoutes } from './dashboard/routes';
import { createSendContext, type SendContext } from './emails/send-emails';
import { dashboardApp } from './web/serve-dashboard';
import { createApiRequestLog } from './request-log/api-request-log';

/** The API's request listener: for node's http.createServer, supertest, or another server's listener. */
export type ApiHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ApiApp {
  /** The accept lane first, then the express app (everything else). */
  app: ApiHandler;
  /** The express app alone, to read its route table (the OpenAPI and metrics tests). */
  expressApp: Express;
  metrics: Metrics;
  /** Releases what the app itself holds (the revocation subscriber); deps are closed by their owner. */
  close: () => void;
  /** Waits for the email committer's and the request log's pending and in-flight writes: call it before closing deps.sql. */
  drain: () => Promise<void>;
}

/** `TRUST_PROXY` as express takes it: a hop count, or a list of addresses, subnets and range names. */
export function trustProxySetting(value: string): number | string[] {
  return /^\d+$/.test(value.trim())
    ? Number(value)
    : value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
}

/** Test seams for edges that reach outside the machine (the SNS certificate fetch). */
export interface AppOptions {
  sesNotifications?: SesNotificationOptions;
}

/** /api/v1's resources, one router serving both the API (API keys) and the dashboard (sessions). */
function publicApiResources(deps: ApiDeps, metrics: Metrics, send: SendContext, apiKeyCache: ApiKeyCache): express.Router {
  const r = express.Router();
  r.use(
    routerOf(
      bindPublicApi({
        emails: send,
        templates: deps,
        domains: { ...deps, identities: createIdentityPort(deps.config, { db: deps.db }), metrics, apiKeyCache },
        webhooks: { db: deps.db, config: deps.config },
        contactBooks: deps,
        contacts: deps,
        segments: deps,
        contactImports: deps,
        contactProperties: deps,
        suppressions: deps,
        analytics: deps,
        campaigns: send,
        addresses: deps,
        requestLog: deps,
        events: deps,
        automations: deps,
      }),
      '/api/v1',
      { bodyLimit: deps.config.BODY_LIMIT },
    ),
  );
  return r;
}

export function createApp(deps: ApiDeps, opts: AppOptions = {}): ApiApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  if (deps.config.TRUST_PROXY) app.set('trust proxy', trustProxySetting(deps.config.TRUST_PROXY));
  const metrics = createMetrics('api');
  const auth = createAuth(deps, metrics);
  const rateLimit = createApplyRateLimit(deps);
  const send = createSendContext(deps);
  const logRequest = requestLogger(deps.log);
  const requestLog = createApiRequestLog(deps, metrics);
  app.use(logRequest);
  app.use(recordHttpMetrics(metrics));
  app.use(rejectUnsafeUrl);
  app.use(healthRoutes(deps));
  app.use(openApiRoutes(deps));
  app.use(subscriptionPages(deps));
  app.get('/metrics', metricsEndpoint(deps, metrics));
  const dashboard = queueDashboard(deps);
  if (dashboard) app.use(QUEUE_DASHBOARD_PATH, dashboard.guard, dashboard.router);
  app.use('/api/ses/notifications', sesNotificationRoutes(deps, { metrics, ...opts.sesNotifications })); // SNS: signed messages, no API key

  // Authentication first, then the rate limit, and only then is a body read: an unauthenticated
  // caller cannot make us parse 50 MB.
  const resources = publicApiResources(deps, metrics, send, auth.apiKeyCache);
  const v1 = express.Router();
  v1.use(auth.middleware, createRateLimit(deps, rateLimit));
  v1.use(resources);
  v1.use(notFoundHandler);
  app.use('/api/v1', requestLog.record, v1);
  // The web dashboard's routes: the same resources per team behind a session (docs/dashboard-api.md).
  app.use('/api/dashboard', dashboardRoutes(deps, { publicApi: resources, send, metrics, apiKeyCache: auth.apiKeyCache }));
  // The dashboard app itself, last, so it never shadows a route above.
  app.use(dashboardApp(deps.config));

  app.use(notFoundHandler);
  app.use(errorHandler);

  // POST /api/v1/emails and /batch before express sees them (emails/accept-lane.ts).
  const trust = app.get('trust proxy fn') as Parameters<typeof proxyaddr>[1];
  const lane = emailAcceptLane({
    send,
    auth,
    rateLimit,
    metrics,
    logRequest,
    recordRequest: requestLog.record,
    errorHandler,
    bodyLimit: deps.config.BODY_LIMIT,
    clientAddress: (req) => proxyaddr(req, trust),
  });
  const handler: ApiHandler = (req, res) => {
    setBaseSecurityHeaders(res);
    if (!lane(req, res)) app(req, res);
  };
  return {
    app: handler,
    expressApp: app,
    metrics,
    close: () => {
      auth.close();
      requestLog.writer.close();
    },
    drain: async () => {
      await send.intake.committer.drain();
      await requestLog.writer.flush();
    },
  };
}
