import type { EmailDraft } from './create-emails';
import { recipientOutcomes, storedSkippedRecipients } from './recipient-outcomes';
import { ALL_TO_SUPPRESSED, withSuppressions } from './suppression';

const draft = (fields: Partial<EmailDraft>): EmailDraft => ({
  teamId: 1,
  domainId: 1,
  region: 'us-east-1',
  source: 'API',
  from: 'me@a.org',
  to: [],
  subject: 'S',
  ...fields,
});

describe('withSuppressions', () => {
  it('drops suppressed cc and bcc and some to, and keeps each with its reason', () => {
    const [d] = withSuppressions(
      [draft({ to: ['Ada <ADA@x.org>', 'bob@x.org'], cc: ['cy@x.org'], bcc: ['dee@x.org', 'eve@x.org'] })],
      [
        { teamId: 1, email: 'ada@x.org', reason: 'HARD_BOUNCE' },
        { teamId: 1, email: 'cy@x.org', reason: 'COMPLAINT' },
        { teamId: 1, email: 'eve@x.org', reason: 'MANUAL' },
        // Another team's suppression of bob does not touch this team's email.
        { teamId: 2, email: 'bob@x.org', reason: 'MANUAL' },
      ],
    );
    expect([d.to, d.cc, d.bcc, d.suppressed]).toEqual([['bob@x.org'], [], ['dee@x.org'], undefined]);
    expect(d.skippedRecipients).toEqual([
      { email: 'Ada <ADA@x.org>', type: 'to', status: 'SUPPRESSED', reason: 'HARD_BOUNCE' },
      { email: 'cy@x.org', type: 'cc', status: 'SUPPRESSED', reason: 'COMPLAINT' },
      { email: 'eve@x.org', type: 'bcc', status: 'SUPPRESSED', reason: 'MANUAL' },
    ]);
  });

  it('keeps an email whose every to is suppressed whole, marked SUPPRESSED, its suppressed recipients named', () => {
    const [d] = withSuppressions(
      [draft({ to: ['ada@x.org'], cc: ['bob@x.org'] })],
      [{ teamId: 1, email: 'ada@x.org', reason: 'HARD_BOUNCE' }],
    );
    expect([d.to, d.cc, d.suppressed]).toEqual([['ada@x.org'], ['bob@x.org'], { reason: ALL_TO_SUPPRESSED }]);
    expect(d.skippedRecipients).toEqual([{ email: 'ada@x.org', type: 'to', status: 'SUPPRESSED', reason: 'HARD_BOUNCE' }]);
  });

  it('leaves drafts without a suppressed recipient as they are', () => {
    const drafts = [draft({ to: ['ada@x.org'] })];
    expect(withSuppressions(drafts, [{ teamId: 1, email: 'bob@x.org', reason: 'MANUAL' }])[0].skippedRecipients).toBeNull();
    expect(withSuppressions(drafts, [])).toBe(drafts);
  });
});

describe('recipientOutcomes', () => {
  const email = {
    to: ['Ada <ada@x.org>', 'bob@x.org'],
    cc: ['cy@x.org'],
    bcc: [],
    latestStatus: 'BOUNCED' as const,
    skippedRecipients: [{ email: 'dee@x.org', type: 'to', status: 'SUPPRESSED', reason: 'COMPLAINT' }],
  };

  it("gives each recipient SES's word about it, the rest the email's, and the skipped their reason", () => {
    const outcomes = recipientOutcomes(email, [
      { status: 'QUEUED', data: null },
      { status: 'SENT', data: null },
      {
        status: 'DELIVERY_DELAYED',
        data: { delayType: 'MailboxFull', delayedRecipients: [{ emailAddress: 'ADA@x.org', diagnosticCode: '452 full' }] },
      },
      { status: 'DELIVERED', data: { recipients: ['ada@x.org', 'cy@x.org'] } },
      // A delay reported after the delivery says less: Ada stays delivered.
      { status: 'DELIVERY_DELAYED', data: { delayedRecipients: [{ emailAddress: 'ada@x.org' }] } },
      {
        status: 'BOUNCED',
        data: {
          bounceType: 'Permanent',
          bouncedRecipients: [{ emailAddress: 'bob@x.org', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
        },
      },
      { status: 'OPENED', data: {} },
    ]);
    expect(outcomes).toEqual([
      { email: 'Ada <ada@x.org>', type: 'to', status: 'DELIVERED', reason: null },
      { email: 'bob@x.org', type: 'to', status: 'BOUNCED', reason: 'smtp; 550 5.1.1 user unknown' },
      { email: 'dee@x.org', type: 'to', status: 'SUPPRESSED', reason: 'COMPLAINT' },
      { email: 'cy@x.org', type: 'cc', status: 'DELIVERED', reason: null },
    ]);
  });

  it("follows the email's own status until SES says more, with its error", () => {
    const queued = recipientOutcomes({ ...email, latestStatus: 'QUEUED', skippedRecipients: null }, [{ status: 'QUEUED', data: null }]);
    expect(queued.map((o) => o.status)).toEqual(['QUEUED', 'QUEUED', 'QUEUED']);
    const failed = recipientOutcomes({ ...email, latestStatus: 'FAILED', skippedRecipients: null }, [
      { status: 'QUEUED', data: null },
      { status: 'FAILED', data: { error: 'Domain not verified' } },
    ]);
    expect(failed.map((o) => [o.status, o.reason])).toEqual([
      ['FAILED', 'Domain not verified'],
      ['FAILED', 'Domain not verified'],
      ['FAILED', 'Domain not verified'],
    ]);
    // A delivery that lists no recipients is about all of them.
    const delivered = recipientOutcomes({ ...email, skippedRecipients: null }, [{ status: 'DELIVERED', data: {} }]);
    expect(delivered.map((o) => o.status)).toEqual(['DELIVERED', 'DELIVERED', 'DELIVERED']);
  });

  it('lists an email whose every to is suppressed once per recipient', () => {
    const outcomes = recipientOutcomes(
      {
        to: ['ada@x.org'],
        cc: ['bob@x.org'],
        bcc: [],
        latestStatus: 'SUPPRESSED',
        skippedRecipients: [{ email: 'ada@x.org', type: 'to', status: 'SUPPRESSED', reason: 'HARD_BOUNCE' }],
      },
      [{ status: 'SUPPRESSED', data: { error: ALL_TO_SUPPRESSED } }],
    );
    expect(outcomes).toEqual([
      { email: 'ada@x.org', type: 'to', status: 'SUPPRESSED', reason: 'HARD_BOUNCE' },
      { email: 'bob@x.org', type: 'cc', status: 'SUPPRESSED', reason: ALL_TO_SUPPRESSED },
    ]);
  });

  it('reads stored skipped recipients leniently', () => {
    expect(storedSkippedRecipients(null)).toEqual([]);
    expect(
      storedSkippedRecipients([
        { email: 'a@x.org', type: 'zz', reason: 'MANUAL' },
        'x',
        { email: 'b@x.org', type: 'cc', reason: 'MANUAL' },
      ]),
    ).toEqual([{ email: 'b@x.org', type: 'cc', status: 'SUPPRESSED', reason: 'MANUAL' }]);
  });
});
