import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createDb,
  createLogger,
  createQueueFactory,
  createRedis,
  createTeam,
  encryptSecret,
  insertDomain,
  newId,
  newWebhookSecret,
  type Config,
  type Db,
  type Redis,
  type WebhookStatus,
} from '@mailrail/core';
import { createTestDatabase, dropDatabase } from '@mailrail/core/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/core/testing/redis';
import { testConfig } from '@mailrail/core/testing/config';
import { waitFor as waitUntil } from '@mailrail/core/testing/wait-for';
import { registerWebhookWorkers, type WebhookWorkerOptions, type WebhookWorkers } from './register';

// Test helpers for the webhook worker: a database, worker instances on their own Redis prefix,
// webhooks written the way the API writes them, and a receiving HTTP server on 127.0.0.1.

export interface ReceivedCall {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; createdAt: string; teamId: number; data: unknown; attempt: number; version: string };
}

export interface Receiver {
  url: string;
  calls: ReceivedCall[];
  /** Decides the status of each call (n counts from 0); 200 by default. */
  respond: (call: ReceivedCall, n: number) => number | 'hang';
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', calls: [], respond: () => 200, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const call: ReceivedCall = { headers: req.headers, body, json: JSON.parse(body) };
      const status = receiver.respond(call, receiver.calls.length);
      receiver.calls.push(call);
      if (status === 'hang') return;
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return receiver;
}

export interface WorkerKit {
  db: Db;
  config: Config;
  newTeam(): Promise<number>;
  addDomain(teamId: number, name: string): Promise<number>;
  /** Inserts a webhook as the API does; returns its id and plain secret. */
  addWebhook(teamId: number, url: string, opts?: { events?: string[]; domainIds?: number[]; status?: WebhookStatus }): Promise<{ id: string; secret: string }>;
  /** Starts webhook workers on a fresh Redis prefix (so tests never share queued jobs). */
  startWorkers(options?: WebhookWorkerOptions, env?: Partial<Config>): Promise<WebhookWorkers>;
  /** Stops every worker started so far and drops its queues. */
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export async function startWorkerKit(): Promise<WorkerKit> {
  const databaseUrl = await createTestDatabase();
  const config = testConfig(databaseUrl, testRedisPrefix(), { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const db = createDb(databaseUrl, 10);
  const started: { workers: WebhookWorkers; redis: Redis; prefix: string; queues: ReturnType<typeof createQueueFactory> }[] = [];

  async function stopWorkers() {
    for (const s of started.splice(0)) {
      await s.workers.close();
      await s.queues.closeAll();
      await deleteRedisPrefix(s.redis, s.prefix).catch(() => undefined);
      s.redis.disconnect();
    }
  }

  return {
    db,
    config,
    newTeam: async () => (await createTeam(db, 'Webhook team')).id,
    addDomain: async (teamId, name) =>
      (await insertDomain(db, config.SECRET, { teamId, name, region: config.AWS_REGION, dkimSelector: 'usesend', verified: true })).id,
    addWebhook: async (teamId, url, opts = {}) => {
      const secret = newWebhookSecret();
      const id = newId();
      await db.webhook.create({
        data: {
          id,
          teamId,
          url,
          events: opts.events ?? [],
          domainIds: opts.domainIds ?? [],
          status: opts.status ?? 'ACTIVE',
          secretEnc: encryptSecret(config.SECRET, secret),
        },
      });
      return { id, secret };
    },
    startWorkers: async (options = {}, env = {}) => {
      const prefix = testRedisPrefix();
      const redis = createRedis(config.REDIS_URL, { forWorker: true });
      const queues = createQueueFactory(redis, prefix);
      const workers = registerWebhookWorkers(
        { config: { ...config, REDIS_PREFIX: prefix, ...env }, db, redis, queues, log: createLogger('silent', 'webhook-test') },
        { dispatchEveryMs: 50, ...options },
      );
      started.push({ workers, redis, prefix, queues });
      return workers;
    },
    stopWorkers,
    close: async () => {
      await stopWorkers();
      await db.$disconnect();
      await dropDatabase(databaseUrl);
    },
  };
}

export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  await waitUntil(check, { timeoutMs, what, intervalMs: 25 });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
