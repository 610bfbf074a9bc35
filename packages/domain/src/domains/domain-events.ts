import type { Domain, Prisma } from '@mailrail/platform/db/generated/client';
import { newId } from '@mailrail/platform/ids';
import type { WebhookEventType } from '../webhooks/events';
import { domainView } from './domain-view';

export type DomainEventType = Extract<WebhookEventType, `domain.${string}`>;

/**
 * Writes a domain event to the webhook outbox. Call it with the transaction that makes the
 * change, so the event exists if and only if the change does; delivery is another process's job.
 */
export async function recordDomainEvent(tx: Prisma.TransactionClient, type: DomainEventType, domain: Domain): Promise<void> {
  await tx.webhookEvent.create({
    data: {
      id: newId(),
      teamId: domain.teamId,
      type,
      domainId: domain.id,
      data: domainView(domain) as unknown as Prisma.InputJsonValue,
    },
  });
}
