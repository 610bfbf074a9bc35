import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { Config } from '@mailrail/platform/config/schema';
import { testConfig } from '@mailrail/testing/config';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { createApp } from '../apps/api/src/app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../apps/api/src/deps';

export interface BenchApi {
  databaseUrl: string;
  prefix: string;
  config: Config;
  deps: ApiDeps;
  server: Server;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Closes the server and the deps, deletes the Redis keys and (unless kept) the database. */
  stop(opts?: { keepDatabase?: boolean }): Promise<void>;
}

/**
 * The real API over HTTP on a loopback port, on a database and Redis prefix of its own. Unlike the
 * tests' startTestApi, no response-contract check wraps the app: a bench measures the app alone.
 */
export async function startBenchApi(env: Record<string, string>): Promise<BenchApi> {
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const config = testConfig(databaseUrl, prefix, env);
  const deps = createApiDeps(config);
  const { app, close } = createApp(deps);
  const server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    databaseUrl,
    prefix,
    config,
    deps,
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async (opts = {}) => {
      server.closeAllConnections();
      server.close();
      close();
      await deleteRedisPrefix(deps.redis, prefix).catch(() => undefined);
      await closeApiDeps(deps);
      if (!opts.keepDatabase) await dropDatabase(databaseUrl);
    },
  };
}
