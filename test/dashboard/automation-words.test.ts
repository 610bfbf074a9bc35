import { incomingPaths, newStep, type StepDraft } from '../../apps/web/src/automations/draft';
import { conditionWords, detailWords, stepSummary, triggerWords } from '../../apps/web/src/automations/words';

// The builder's words for what the API answers: the kinds it edits, and kinds added to the API
// after it (shown in words, never a crash), and the paths it draws indented.

describe('automation words', () => {
  it('says known triggers, and triggers of kinds the dashboard does not edit, in words', () => {
    expect(triggerWords({ type: 'event', event: 'trial.started' })).toBe('When the event “trial.started” is recorded');
    const names = { book: () => 'Trial users', segment: () => 'Active buyers', campaign: () => 'Spring sale' };
    expect(triggerWords({ type: 'contactAdded', contactBookId: 'b1' }, names)).toBe('When a contact is added to the book “Trial users”');
    expect(triggerWords({ type: 'segmentEntered', segmentId: 'seg_1' }, names)).toBe('When a contact enters the segment “Active buyers”');
    expect(triggerWords({ type: 'segmentEntered', segmentId: 'seg_1' })).toBe('When a contact enters the segment “seg_1”');
    expect(
      triggerWords(
        { type: 'date', contactBookId: 'b1', property: 'properties.renewsAt', offsetDays: -7, time: '08:30', timezoneProperty: 'tz' },
        names,
      ),
    ).toBe(
      "7 days before the date in the contact property “renewsAt”, at 08:30 in the contact's time zone (property “tz”), for each contact of the book “Trial users”",
    );
    expect(triggerWords({ type: 'date', contactBookId: 'b1', property: 'createdAt', offsetDays: 1 }, names)).toBe(
      "1 day after the day the contact was created, at 09:00 in the contact's time zone (property “timezone”), for each contact of the book “Trial users”",
    );
    expect(triggerWords({ type: 'date', contactBookId: 'b1', property: 'createdAt', offsetDays: 0 })).toMatch(
      /^On the day the contact was created, at 09:00/,
    );
    expect(triggerWords({ type: 'webhookReceived', source: 'stripe' })).toBe('When “webhook received” happens (source stripe)');
  });

  it('says conditions of any source, and a step of an unknown type by its fields', () => {
    expect(conditionWords({ source: 'contact', field: 'properties.plan', operator: 'equals', value: 'pro' })).toBe(
      "the contact's plan is “pro”",
    );
    expect(conditionWords({ source: 'segment', segmentId: 'seg_1', operator: 'notIn' })).toBe('the contact is not in the segment “seg_1”');
    expect(conditionWords({ source: 'segment', segmentId: 'seg_1', operator: 'in' }, { segment: () => 'Active buyers' })).toBe(
      'the contact is in the segment “Active buyers”',
    );
    expect(conditionWords({ source: 'emailActivity', operator: 'openedWithin', value: 7 })).toBe(
      'the contact opened an email in the last 7 days',
    );
    expect(conditionWords({ source: 'emailActivity', operator: 'notDeliveredWithin', value: 1 })).toBe(
      'the contact was not delivered an email in the last 1 day',
    );
    expect(
      conditionWords({ source: 'emailActivity', operator: 'notOpenedCampaign', value: 'cmp_1' }, { campaign: () => 'Spring sale' }),
    ).toBe('the contact did not open the campaign “Spring sale”');
    expect(
      stepSummary(
        {
          id: 'b',
          type: 'branch',
          condition: {
            match: 'any',
            conditions: [
              { source: 'emailActivity', operator: 'clickedWithin', value: 30 },
              { source: 'segment', segmentId: 's', operator: 'in' },
            ],
          },
        },
        { segment: () => 'VIP' },
      ),
    ).toBe('If any of: the contact clicked a link in an email in the last 30 days; the contact is in the segment “VIP”');
    expect(conditionWords({ source: 'somethingNew', window: 30 })).toBe('something new: window 30');
    expect(stepSummary({ id: 'x', type: 'sms', to: 'phone' })).toBe('to phone');
  });

  it("turns the runtime's seconds and instants into words", () => {
    expect(detailWords('waiting 86400 s, until 2026-12-08T05:43:04.984Z', () => '8 Dec')).toBe('waiting 1 day, until 8 Dec');
  });

  it("labels and indents the steps reached only by a branch's or an event's path", () => {
    const steps: StepDraft[] = [
      { id: 'check', type: 'branch', else: 'late' },
      { id: 'yes', type: 'sendEmail', next: null },
      { id: 'wait', type: 'waitForEvent', timeoutNext: 'late' },
      { id: 'late', type: 'exit' },
    ];
    const paths = incomingPaths(steps);
    expect(paths.get('yes')).toEqual({ label: 'Path: if “check” holds', indent: true });
    expect(paths.get('wait')).toEqual({ label: 'No step leads here: no contact reaches this step', indent: false });
    expect(paths.get('late')).toEqual({
      label: 'Path: if “check” does not hold, or when the event of “wait” arrives, or when “wait” times out',
      indent: true,
    });
    expect(newStep('sendEmail', [{ id: 'email-1', type: 'sendEmail' }], 'a@b.example').id).toBe('email-2');
  });
});
