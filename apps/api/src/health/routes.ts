import { Router } from 'express';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';

/** Liveness and readiness probes, outside authentication. */
export function healthRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/ready', async (_req, res) => {
    const check = async (fn: () => Promise<unknown>) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([fn(), new Promise((_, rej) => (timer = setTimeout(() => rej(new Error('timeout')), 2000)))]);
        return 'ok';
      } catch {
        return 'unavailable';
      } finally {
        clearTimeout(timer);
      }
    };
    const [postgres, redis] = await Promise.all([check(() => prismaExecutor(deps.db).query('SELECT 1')), check(() => deps.redis.ping())]);
    const ready = postgres === 'ok' && redis === 'ok';
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', postgres, redis });
  });
  return r;
}
