// The SNS intake as the API runs it (request log, the notification router, the error handler),
// with the benchmark's certificate served by the HTTP port instead of amazonaws.com.
import { readFileSync } from 'node:fs';
import express from 'express';
import { loadConfigOrExit } from '@mailrail/platform/config/load';
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
// CPU seconds this process has used: the client reads it before and after the load, so the
// figure "server CPU per event" does not depend on what else the shared machine is running.
app.get('/cpu', (_req, res) => {
  const u = process.cpuUsage();
  res.json({ cpuMs: (u.user + u.system) / 1000 });
});
// Baseline: the same middleware and body reading with nothing behind it, for comparison.
app.post('/baseline', express.text({ type: () => true, limit: '512kb' }), (_req, res) => {
  res.json({ data: 'Notification queued' });
});
app.use('/api/ses/notifications', sesNotificationRoutes(deps, { httpGet: async () => ({ status: 200, body: cert }) }));
app.use(errorHandler);
app.listen(config.PORT, config.HOST);
process.on('SIGTERM', () => process.exit(0));
