import { newId } from '@mailrail/platform/ids';
import { withTransaction, type TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';

interface OutboxRow {
  id: string;
  teamId: number;
  type: string;
  domainId: number | null;
  data: unknown;
}

interface WebhookFilter {
  id: string;
  events: string[];
  domainIds: number[];
}

/**
 * Whether a webhook receives an event: its event list (empty = every type) and its domain list
 * (empty = every domain; events without a domain, such as contact.*, pass). A `webhook.test`
 * event that names a webhook goes to that webhook only, whatever its filters.
 */
export function webhookWantsEvent(webhook: WebhookFilter, event: Pick<OutboxRow, 'type' | 'domainId' | 'data'>): boolean {
  if (event.type === 'webhook.test') {
    const target = (event.data as { webhookId?: unknown } | null)?.webhookId;
    if (typeof target === 'string') return target === webhook.id;
  }
  if (webhook.events.length > 0 && !webhook.events.includes(event.type)) return false;
  if (webhook.domainIds.length > 0 && event.domainId !== null && !webhook.domainIds.includes(event.domainId)) return false;
  return true;
}

/**
 * Claims up to `batchSize` undispatched outbox rows (SKIP LOCKED: concurrent dispatchers take
 * disjoint rows), creates one delivery per matching ACTIVE webhook and marks the rows
 * dispatched, all in one transaction. Returns how many events were claimed and the new delivery
 * ids, which the caller enqueues after the commit (a lost enqueue is redone by the sweeper).
 */
// Through the SQL executor, not Prisma: this runs every second in every worker, and a worker whose
// jobs never need Prisma then never builds its client (docs/worker.md, "Memory").
export async function dispatchWebhookEvents(
  sql: TransactionalSqlExecutor,
  batchSize: number,
): Promise<{ events: number; deliveryIds: string[] }> {
  return withTransaction(sql, async (tx) => {
    const events = await tx.query<OutboxRow>(
      `SELECT "id", "teamId", "type", "domainId", "data" FROM "WebhookEvent"
        WHERE "dispatchedAt" IS NULL
        ORDER BY "createdAt"
        LIMIT $1::int
        FOR UPDATE SKIP LOCKED`,
      [batchSize],
    );
    if (events.length === 0) return { events: 0, deliveryIds: [] };

    const teamIds = [...new Set(events.map((e) => e.teamId))];
    const webhooks = await tx.query<WebhookFilter & { teamId: number }>(
      `SELECT id, "teamId", events, "domainIds" FROM "Webhook" WHERE "teamId" = ANY($1::int[]) AND status = 'ACTIVE'`,
      [teamIds],
    );
    const rows = events.flatMap((event) =>
      webhooks
        .filter((w) => w.teamId === event.teamId && webhookWantsEvent(w, event))
        .map((w) => ({ id: newId(), webhookId: w.id, eventId: event.id })),
    );
    const created = rows.length
      ? await tx.query<{ id: string }>(
          `INSERT INTO "WebhookDelivery" (id, "webhookId", "eventId", "nextAttemptAt", "updatedAt")
           SELECT d.id, d.webhook_id, d.event_id, now(), now()
             FROM unnest($1::text[], $2::text[], $3::text[]) AS d(id, webhook_id, event_id)
           ON CONFLICT DO NOTHING
           RETURNING id`,
          [rows.map((r) => r.id), rows.map((r) => r.webhookId), rows.map((r) => r.eventId)],
        )
      : [];
    await tx.execute(`UPDATE "WebhookEvent" SET "dispatchedAt" = now() WHERE id = ANY($1::text[])`, [events.map((e) => e.id)]);
    return { events: events.length, deliveryIds: created.map((d) => d.id) };
  });
}
