import { crossedUpward, outcomeRates, reputationLevel, SES_THRESHOLDS } from './rates';

describe('outcomeRates', () => {
  it('uses sent for delivery, bounces and complaints, and delivered for opens and clicks', () => {
    expect(outcomeRates({ sent: 200, delivered: 100, opened: 50, clicked: 10, bounced: 20, complained: 1 })).toEqual({
      deliveryRate: 50,
      openRate: 50,
      clickRate: 10,
      bounceRate: 10,
      complaintRate: 0.5,
    });
  });

  it('is 0 where a denominator is 0, never NaN or Infinity', () => {
    expect(outcomeRates({ sent: 0, delivered: 0, opened: 3, clicked: 1, bounced: 0, complained: 0 })).toEqual({
      deliveryRate: 0,
      openRate: 0,
      clickRate: 0,
      bounceRate: 0,
      complaintRate: 0,
    });
    // Sent but nothing delivered yet: opens over delivered stay 0.
    expect(outcomeRates({ sent: 4, delivered: 0, opened: 1, clicked: 0, bounced: 4, complained: 0 }).openRate).toBe(0);
  });
});

describe('reputationLevel', () => {
  it('puts a rate at a threshold on that threshold', () => {
    expect(reputationLevel(4.99, SES_THRESHOLDS.bounceRate)).toBe('healthy');
    expect(reputationLevel(5, SES_THRESHOLDS.bounceRate)).toBe('review');
    expect(reputationLevel(10, SES_THRESHOLDS.bounceRate)).toBe('pause');
    expect(reputationLevel(0.1, SES_THRESHOLDS.complaintRate)).toBe('review');
    expect(reputationLevel(0.5, SES_THRESHOLDS.complaintRate)).toBe('pause');
  });

  it('counts only upward moves as crossings', () => {
    expect(crossedUpward('healthy', 'review')).toBe(true);
    expect(crossedUpward('review', 'pause')).toBe(true);
    expect(crossedUpward('review', 'review')).toBe(false);
    expect(crossedUpward('pause', 'review')).toBe(false);
  });
});
