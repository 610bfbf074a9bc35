import IORedis, { Cluster, type RedisOptions } from 'ioredis';
import { closeHandler } from 'ioredis/built/redis/event_handler';
import type { RedisTarget } from '../config/schema';

/**
 * A connection to one Redis, a Sentinel-managed master or a Redis Cluster. Both ioredis classes
 * have the same command methods (and BullMQ takes either); code that needs something only one of
 * them has (SCAN over every node, the cluster's topology) checks `isCluster`.
 */
export type Redis = IORedis | Cluster;

/**
 * Every Redis connection of the processes is made here, from the one target the configuration
 * chose (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS; a plain URL string is REDIS_URL).
 * BullMQ needs maxRetriesPerRequest: null on connections used by workers; the API fails fast.
 * The API's and the SMTP relay's connection pipelines automatically: commands issued in the same
 * tick (the idempotency results of every email one group commit answered, say) leave in one write,
 * not one each. Workers keep plain connections: BullMQ duplicates them for its blocking reads; the
 * API's and the relay's queues get a plain duplicate (createBaseDeps).
 */
export function createRedis(target: RedisTarget | string, opts: { forWorker?: boolean } = {}): Redis {
  const t: RedisTarget = typeof target === 'string' ? { mode: 'standalone', url: target } : target;
  const common: RedisOptions = {
    maxRetriesPerRequest: opts.forWorker ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
    enableAutoPipelining: !opts.forWorker,
  };
  if (t.mode === 'standalone') return endsWhenDisconnected(new IORedis(t.url, common));
  const auth = { username: t.username, password: t.password };
  if (t.mode === 'sentinel') {
    // ioredis asks the sentinels for the master. After a failover the old master answers READONLY
    // (it is a replica now): reconnect, which asks the sentinels again, and resend the command.
    // failoverDetector also listens for +switch-master, so idle connections move at once.
    return endsWhenDisconnected(
      new IORedis({
        ...common,
        ...auth,
        sentinels: t.sentinels,
        name: t.name,
        failoverDetector: true,
        reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
      }),
    );
  }
  return endsWhenDisconnected(
    new Cluster(t.nodes, {
      redisOptions: { ...common, ...auth },
      // Commands sent during a failover wait for the new topology instead of failing at once.
      enableOfflineQueue: true,
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 300,
      // Workers wait out a whole failover (node timeout plus election); the API answers 503 sooner.
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
    }),
  );
}

/**
 * ioredis 6.0 cannot end a connection that lost Redis and waits to reconnect: disconnect() cancels
 * the retry, but no socket is left whose close would finish the job, so the status stays
 * 'reconnecting' and 'end' never comes (redis/ioredis#1247, #2169). BullMQ's Worker.close() waits
 * for 'end' on its blocking connection, so a worker stopped just after a Sentinel failover (or any
 * Redis blip) hung until it was killed. This finishes the close the way ioredis does for a client
 * that never connected. Duplicates (BullMQ's blocking connections) get the same treatment.
 */
function endsWhenDisconnected<C extends Redis>(client: C): C {
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    if (reconnect || client.status !== 'reconnecting') return disconnect(reconnect);
    // What each class's disconnect() does for a client that never connected ('wait'), after
    // cancelling the retry; a standalone connector's disconnect would only arm a timer for a
    // socket that is already gone.
    const internals = client as unknown as {
      manuallyClosing: boolean;
      reconnectTimeout: NodeJS.Timeout | null;
      setStatus(s: string): void;
      handleCloseEvent(): void;
    };
    if (internals.reconnectTimeout) clearTimeout(internals.reconnectTimeout);
    internals.reconnectTimeout = null;
    internals.manuallyClosing = true;
    if (client.isCluster) {
      internals.setStatus('close');
      internals.handleCloseEvent();
    } else {
      closeHandler(client)();
    }
  };
  const duplicate = client.duplicate.bind(client) as (...args: unknown[]) => C;
  client.duplicate = ((...args: unknown[]) => endsWhenDisconnected(duplicate(...args))) as C['duplicate'];
  return client;
}

/** A new connection to the same Redis (a subscriber needs its own). */
export function duplicateRedis(redis: Redis, opts: { enableAutoPipelining?: boolean } = {}): Redis {
  return redis.isCluster ? (redis as Cluster).duplicate(undefined, opts) : (redis as IORedis).duplicate(opts);
}

/** The masters of a cluster, or the one node: where a SCAN must run to see every key. */
export function scanTargets(redis: Redis): IORedis[] {
  return redis.isCluster ? (redis as Cluster).nodes('master') : [redis as IORedis];
}
