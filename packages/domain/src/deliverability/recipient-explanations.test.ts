import type { EmailStatus } from '@mailrail/platform/db/generated/enums';
import { explainedRecipientOutcomes } from './recipient-explanations';

const at = (minute: number) => new Date(Date.UTC(2026, 11, 6, 10, minute));
const event = (status: EmailStatus, minute: number, data: unknown = null) => ({ status, data, createdAt: at(minute) });

describe('explainedRecipientOutcomes', () => {
  it('explains each recipient by the event that decided its own outcome', () => {
    const email = {
      to: ['Ada <ada@x.org>', 'bob@x.org'],
      cc: ['cy@x.org'],
      bcc: [],
      latestStatus: 'BOUNCED' as const,
      skippedRecipients: [{ email: 'Dee@x.org', type: 'cc', status: 'SUPPRESSED', reason: 'COMPLAINT' }],
    };
    const events = [
      event('QUEUED', 0),
      event('SENT', 1),
      event('DELIVERY_DELAYED', 2, { delayType: 'MailboxFull', delayedRecipients: [{ emailAddress: 'cy@x.org' }] }),
      event('DELIVERED', 3, { recipients: ['ada@x.org'], smtpResponse: '250 ok' }),
      event('OPENED', 4),
      event('BOUNCED', 5, {
        bounceType: 'Transient',
        bounceSubType: 'MailboxFull',
        bouncedRecipients: [{ emailAddress: 'BOB@x.org', diagnosticCode: 'smtp; 452 4.2.2 over quota' }],
      }),
    ];
    const out = explainedRecipientOutcomes(email, events);
    const by = Object.fromEntries(out.map((r) => [r.email, r]));
    expect(by['Ada <ada@x.org>']).toMatchObject({
      status: 'DELIVERED',
      statusAt: at(3),
      explanation: { title: 'Delivered', action: 'nothing' },
    });
    expect(by['bob@x.org']).toMatchObject({
      status: 'BOUNCED',
      statusAt: at(5),
      explanation: { title: 'Soft bounce: the mailbox is full', action: 'nothing', code: 'Transient / MailboxFull · 4.2.2' },
    });
    expect(by['cy@x.org']).toMatchObject({ status: 'DELIVERY_DELAYED', statusAt: at(2), explanation: { action: 'ses-retrying' } });
    expect(by['Dee@x.org']).toMatchObject({
      status: 'SUPPRESSED',
      statusAt: null,
      explanation: { title: 'Suppressed after a complaint', action: 'not-sent' },
    });
  });

  it('a queued email has nothing to explain yet; an email SES refused explains every recipient', () => {
    const email = { to: ['a@x.org'], cc: [], bcc: [], latestStatus: 'QUEUED' as const, skippedRecipients: null };
    expect(explainedRecipientOutcomes(email, [event('QUEUED', 0)])).toEqual([
      { email: 'a@x.org', type: 'to', status: 'QUEUED', reason: null, statusAt: at(0), explanation: null },
    ]);
    const failed = explainedRecipientOutcomes({ ...email, latestStatus: 'FAILED' }, [
      event('QUEUED', 0),
      event('FAILED', 1, { error: 'MessageRejected', message: 'Email address is not verified.' }),
    ]);
    expect(failed[0]).toMatchObject({ status: 'FAILED', explanation: { action: 'not-sent', code: 'MessageRejected' } });
    expect(failed[0].explanation!.sentence).toContain('Email address is not verified.');
  });
});
