import { EMAIL_FOR_WEBHOOK_COLUMNS, recordEmailStatusEvent, type EmailEventExtras } from '@mailrail/domain/webhooks/payloads';
import { type Clock } from '@mailrail/platform/clock';
import { type EmailEventRecorded } from '@mailrail/domain/ses-events/process-ses-event';
import { type Db } from '@mailrail/platform/db/client';
import { type Prisma } from '@mailrail/platform/db/generated/client';

const HAS_WEBHOOKS_TTL_MS = 5_000;

function extrasFrom(recorded: EmailEventRecorded): EmailEventExtras {
  // `detail` is the event's own sub-object (SES's `bounce`, `open`, `click`), not the whole event.
  const d = recorded.detail;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (recorded.status === 'BOUNCED') {
    const first = Array.isArray(d.bouncedRecipients) ? (d.bouncedRecipients[0] as Record<string, unknown> | undefined) : undefined;
    const message = str(first?.diagnosticCode);
    return { bounce: { type: str(d.bounceType) ?? '', subType: str(d.bounceSubType) ?? '', ...(message ? { message } : {}) } };
  }
  if (recorded.status === 'OPENED')
    return {
      open: { timestamp: str(d.timestamp) ?? recorded.occurredAt.toISOString(), userAgent: str(d.userAgent), ip: str(d.ipAddress) },
    };
  if (recorded.status === 'CLICKED') {
    return {
      click: {
        timestamp: str(d.timestamp) ?? recorded.occurredAt.toISOString(),
        url: str(d.link) ?? '',
        userAgent: str(d.userAgent),
        ip: str(d.ipAddress),
      },
    };
  }
  return {};
}

/**
 * The SES event processor's hook: writes the `email.<status>` webhook event into the outbox in
 * the event's own transaction. Teams without an active webhook skip the extra read (cached a few
 * seconds, so a new webhook starts receiving within that time).
 */
export function emailEventWebhooks(db: Db, clock: Clock) {
  const hasWebhooks = new Map<number, { value: boolean; until: number }>();
  async function teamHasWebhooks(teamId: number): Promise<boolean> {
    const hit = hasWebhooks.get(teamId);
    if (hit && hit.until > clock.now().getTime()) return hit.value;
    const value = (await db.webhook.count({ where: { teamId, status: 'ACTIVE' } })) > 0;
    hasWebhooks.set(teamId, { value, until: clock.now().getTime() + HAS_WEBHOOKS_TTL_MS });
    return value;
  }
  return async (tx: Prisma.TransactionClient, recorded: EmailEventRecorded): Promise<void> => {
    if (!(await teamHasWebhooks(recorded.email.teamId))) return;
    const email = await tx.email.findUnique({
      where: { id: recorded.email.id },
      select: EMAIL_FOR_WEBHOOK_COLUMNS,
    });
    if (email) await recordEmailStatusEvent(tx, email, recorded.status, recorded.occurredAt, extrasFrom(recorded));
  };
}
