import { recordEmailStatusEvent, type EmailEventRecorded, type Db, type EmailEventExtras, type Prisma } from '@mailrail/core';

const HAS_WEBHOOKS_TTL_MS = 5_000;

function extrasFrom(recorded: EmailEventRecorded): EmailEventExtras {
  const d = recorded.detail as Record<string, Record<string, unknown> | undefined>;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (recorded.status === 'BOUNCED' && d.bounce) return { bounce: { type: str(d.bounce.bounceType) ?? '', subType: str(d.bounce.bounceSubType) ?? '' } };
  if (recorded.status === 'OPENED' && d.open) return { open: { timestamp: str(d.open.timestamp) ?? recorded.occurredAt.toISOString(), userAgent: str(d.open.userAgent), ip: str(d.open.ipAddress) } };
  if (recorded.status === 'CLICKED' && d.click) {
    return { click: { timestamp: str(d.click.timestamp) ?? recorded.occurredAt.toISOString(), url: str(d.click.link) ?? '', userAgent: str(d.click.userAgent), ip: str(d.click.ipAddress) } };
  }
  return {};
}

/**
 * The SES event processor's hook: writes the `email.<status>` webhook event into the outbox in
 * the event's own transaction. Teams without an active webhook skip the extra read (cached a few
 * seconds, so a new webhook starts receiving within that time).
 */
export function emailEventWebhooks(db: Db) {
  const hasWebhooks = new Map<number, { value: boolean; until: number }>();
  async function teamHasWebhooks(teamId: number): Promise<boolean> {
    const hit = hasWebhooks.get(teamId);
    if (hit && hit.until > Date.now()) return hit.value;
    const value = (await db.webhook.count({ where: { teamId, status: 'ACTIVE' } })) > 0;
    hasWebhooks.set(teamId, { value, until: Date.now() + HAS_WEBHOOKS_TTL_MS });
    return value;
  }
  return async (tx: Prisma.TransactionClient, recorded: EmailEventRecorded): Promise<void> => {
    if (!(await teamHasWebhooks(recorded.email.teamId))) return;
    const email = await tx.email.findUnique({
      where: { id: recorded.email.id },
      select: { id: true, teamId: true, from: true, to: true, subject: true, campaignId: true, contactId: true, domainId: true, templateId: true },
    });
    if (email) await recordEmailStatusEvent(tx, email, recorded.status, recorded.occurredAt, extrasFrom(recorded));
  };
}
