import { EmailStatus } from '@mailrail/platform/db/generated/enums';
import { EMAIL_STATUS_ORDER, emailStatusRank, forwardStatus, isStatusForward, statusesBelow } from './status';

describe('email status rank', () => {
  it('ranks every status exactly once', () => {
    expect([...EMAIL_STATUS_ORDER].sort()).toEqual(Object.values(EmailStatus).sort());
  });

  it('moves through the delivery progress forward only', () => {
    const progress = ['SCHEDULED', 'QUEUED', 'SENT', 'DELIVERY_DELAYED', 'DELIVERED', 'OPENED', 'CLICKED'] as const;
    for (let i = 1; i < progress.length; i++) {
      expect(isStatusForward(progress[i - 1], progress[i])).toBe(true);
      expect(isStatusForward(progress[i], progress[i - 1])).toBe(false);
    }
    expect(forwardStatus('OPENED', 'DELIVERED')).toBe('OPENED');
    expect(forwardStatus('DELIVERED', 'DELIVERED')).toBe('DELIVERED');
    expect(forwardStatus(null, 'QUEUED')).toBe('QUEUED');
  });

  it('lets outcomes outrank progress, and never the other way round', () => {
    for (const outcome of ['BOUNCED', 'COMPLAINED', 'REJECTED', 'RENDERING_FAILURE', 'FAILED', 'CANCELLED', 'SUPPRESSED'] as const) {
      for (const progress of ['SCHEDULED', 'QUEUED', 'SENT', 'DELIVERY_DELAYED', 'DELIVERED', 'OPENED', 'CLICKED'] as const) {
        expect(isStatusForward(progress, outcome)).toBe(true);
        expect(isStatusForward(outcome, progress)).toBe(false);
      }
    }
    expect(forwardStatus('BOUNCED', 'COMPLAINED')).toBe('COMPLAINED');
    expect(forwardStatus('COMPLAINED', 'BOUNCED')).toBe('COMPLAINED');
    expect(emailStatusRank.SUPPRESSED).toBe(EMAIL_STATUS_ORDER.length - 1);
  });

  it('lists the statuses a new one may replace', () => {
    expect(statusesBelow('SENT')).toEqual(['SCHEDULED', 'QUEUED']);
    expect(statusesBelow('SCHEDULED')).toEqual([]);
  });
});
