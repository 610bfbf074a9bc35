import { parseSesEvent } from './ses-event';
import { EVENT_STATUS_ORDER, statusesReplaceableBy, type EventStatus } from './status-rank';
import type { EmailStatus } from '@mailrail/platform/db/generated/enums';

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((x, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((p) => [x, ...p]));
}

describe('status rank', () => {
  it('converges to the highest status whatever the order and repetition of events', () => {
    const events: EventStatus[] = ['SENT', 'DELIVERED', 'OPENED', 'CLICKED', 'DELIVERY_DELAYED', 'DELIVERED'];
    for (const order of permutations(events)) {
      let status: EmailStatus = 'QUEUED';
      for (const next of order) if (statusesReplaceableBy(next).includes(status)) status = next;
      expect(status).toBe('CLICKED');
    }
  });

  it('never replaces our own final statuses', () => {
    for (const next of EVENT_STATUS_ORDER) {
      for (const final of ['FAILED', 'CANCELLED', 'SUPPRESSED'] as EmailStatus[]) expect(statusesReplaceableBy(next)).not.toContain(final);
      expect(statusesReplaceableBy(next)).toContain('QUEUED');
    }
  });
});

describe('parseSesEvent', () => {
  const mail = { messageId: 'ses-1', timestamp: '2026-01-02T03:04:05.000Z', headers: [{ name: 'x-usesend-email-id', value: ' abc ' }] };

  it('reads the notification format and normalises suppressed addresses', () => {
    const res = parseSesEvent(
      JSON.stringify({
        notificationType: 'Bounce',
        mail,
        bounce: {
          bounceType: 'Permanent',
          bouncedRecipients: [{ emailAddress: '"Bob" <Bob@Example.ORG>' }, { emailAddress: 'bob@example.org' }],
        },
      }),
    );
    expect(res).toMatchObject({
      ok: true,
      event: {
        type: 'Bounce',
        status: 'BOUNCED',
        sesMessageId: 'ses-1',
        headerEmailId: 'abc',
        hardBounce: true,
        suppress: { emails: ['bob@example.org'], reason: 'HARD_BOUNCE' },
      },
    });
    if (res.ok) expect(res.event.occurredAt?.toISOString()).toBe('2026-01-02T03:04:05.000Z');
  });

  it('reports what is not an SES event instead of throwing', () => {
    expect(parseSesEvent('nope')).toEqual({ ok: false, reason: 'not-json' });
    expect(parseSesEvent('{"eventType":"Send"}')).toEqual({ ok: false, reason: 'not-ses-event' });
    expect(parseSesEvent(JSON.stringify({ notificationType: 'Received', mail }))).toEqual({
      ok: false,
      reason: 'unknown-type',
      type: 'Received',
    });
  });
});
