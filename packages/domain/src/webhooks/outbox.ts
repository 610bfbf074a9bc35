import type { Prisma } from '@mailrail/platform/db/client';
import { newId } from '@mailrail/platform/ids';
import type { WebhookEventType } from './events';

export interface WebhookEventInput {
  teamId: number;
  type: WebhookEventType;
  /** The domain the event belongs to (emails, domains); webhooks filtered by domain use it. */
  domainId?: number | null;
  data: Prisma.InputJsonValue;
}

/** Anything that can write rows: the Prisma client or a transaction client. */
type OutboxWriter = Pick<Prisma.TransactionClient, 'webhookEvent'>;

/**
 * Writes an outbox row. Call it with the transaction that makes the change it reports, so an
 * event is stored if and only if the change is; the worker's dispatcher delivers it.
 */
export async function recordWebhookEvent(tx: OutboxWriter, input: WebhookEventInput): Promise<string> {
  const id = newId();
  await tx.webhookEvent.create({
    data: { id, teamId: input.teamId, type: input.type, domainId: input.domainId ?? null, data: input.data },
  });
  return id;
}

/** Several events in one statement (bulk contact changes, status updates of many emails). */
export async function recordWebhookEvents(tx: OutboxWriter, inputs: WebhookEventInput[]): Promise<string[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map((e) => ({ id: newId(), teamId: e.teamId, type: e.type, domainId: e.domainId ?? null, data: e.data }));
  await tx.webhookEvent.createMany({ data: rows });
  return rows.map((r) => r.id);
}
