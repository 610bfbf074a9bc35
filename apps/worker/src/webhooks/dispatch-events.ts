import { newId } from '@mailrail/platform/ids';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { type Db } from '@mailrail/platform/db/client';

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
export async function dispatchWebhookEvents(db: Db, batchSize: number): Promise<{ events: number; deliveryIds: string[] }> {
  return db.$transaction(async (tx) => {
    const events = await prismaExecutor(tx).query<OutboxRow>(
      `SELECT "id", "teamId", "type", "domainId", "data" FROM "WebhookEvent"
        WHERE "dispatchedAt" IS NULL
        ORDER BY "createdAt"
        LIMIT $1::int
        FOR UPDATE SKIP LOCKED`,
      [batchSize],
    );
    if (events.length === 0) return { events: 0, deliveryIds: [] };

    const teamIds = [...new Set(events.map((e) => e.teamId))];
    const webhooks = await tx.webhook.findMany({
      where: { teamId: { in: teamIds }, status: 'ACTIVE' },
      select: { id: true, teamId: true, events: true, domainIds: true },
    });
    const rows = events.flatMap((event) =>
      webhooks
        .filter((w) => w.teamId === event.teamId && webhookWantsEvent(w, event))
        .map((w) => ({ id: newId(), webhookId: w.id, eventId: event.id, nextAttemptAt: new Date() })),
    );
    const created = rows.length
      ? await tx.webhookDelivery.createManyAndReturn({ data: rows, skipDuplicates: true, select: { id: true } })
      : [];
    await tx.webhookEvent.updateMany({ where: { id: { in: events.map((e) => e.id) } }, data: { dispatchedAt: new Date() } });
    return { events: events.length, deliveryIds: created.map((d) => d.id) };
  });
}
