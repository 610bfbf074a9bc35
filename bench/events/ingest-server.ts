// The SNS intake as the API runs it (request log, the notification router, the error handler),
// with the benchmark's certificate served by the HTTP port instead of amazonaws.com.
import { readFileSync } from 'node:fs';
import express from 'express';
import { loadConfigOrExit } from '../../packages/core/src';
import { createApiDeps } from '../../apps/api/src/deps';
import { errorHandler } from '../../apps/api/src/http/errors';
import { requestLogger } from '../../apps/api/src/http/request-log';
import { sesNotificationRoutes } from '../../apps/api/src/ses-notifications/routes';

const config = loadConfigOrExit();
const deps = createApiDeps(config);
const cert = readFileSync(process.env.BENCH_CERT_FILE!, 'utf8');
const app = express();
app.use(requestLogger(deps.log));
app.get('/health', (_req, res) => {
  res.json({ status: 'ok' });
});
app.use('/api/ses/notifications', sesNotificationRoutes(deps, { httpGet: async () => ({ status: 200, body: cert }) }));
app.use(errorHandler);
app.listen(config.PORT, config.HOST);
process.on('SIGTERM', () => process.exit(0));
