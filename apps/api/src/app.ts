import express, { type Express } from 'express';
import type { ApiDeps } from './deps';
import { emailRoutes } from './emails/routes';
import { healthRoutes } from './health/routes';
import { templateRoutes } from './templates/routes';
import { createAuth } from './http/auth';
import { errorHandler, notFoundHandler } from './http/errors';
import { jsonBody } from './http/json-body';
import { createRateLimit } from './http/rate-limit';
import { requestLogger } from './http/request-log';

export interface ApiApp {
  app: Express;
  /** Releases what the app itself holds (the revocation subscriber); deps are closed by their owner. */
  close: () => void;
}

export function createApp(deps: ApiDeps): ApiApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  app.use(requestLogger(deps.log));
  app.use(healthRoutes(deps));

  // Authentication first, then the rate limit, and only then is a body read: an unauthenticated
  // caller cannot make us parse 50 MB.
  const auth = createAuth(deps);
  const v1 = express.Router();
  v1.use(auth.middleware, createRateLimit(deps), ...jsonBody(deps.config.BODY_LIMIT));
  v1.use('/emails', emailRoutes(deps));
  v1.use('/templates', templateRoutes(deps));
  v1.use(notFoundHandler);
  app.use('/api/v1', v1);

  app.use(notFoundHandler);
  app.use(errorHandler);
  return { app, close: auth.close };
}
