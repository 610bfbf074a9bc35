import type { Logger } from '@mailrail/platform/log/logger';

/**
 * BullMQ job schedulers (every periodic job of the registry) live in Redis, so a Redis that lost
 * its data (restart without persistence, flush, failover to an empty replica) loses them, and the
 * work they drive stops until a worker restarts. Every worker therefore declares the registry at
 * start and again every `everyMs`; declaring is an idempotent upsert.
 */
export async function keepDeclared(what: string, declare: () => Promise<unknown>, everyMs: number, log: Logger): Promise<() => void> {
  await declare();
  const timer = setInterval(() => {
    declare().catch((err) => log.warn({ err }, `could not declare the ${what} again`));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** How often schedulers are declared again: a Redis that lost them gets them back within this. */
export const REDECLARE_EVERY_MS = 10_000;
