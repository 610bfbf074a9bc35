import { z } from 'zod';
import { EMAIL_ACTIVITY_OPERATORS, MAX_ACTIVITY_DAYS } from '@mailrail/domain/audience/segments/segment-filter';
import { successors } from './successors';

// The wire shape of an automation's definition (docs/automations.md): a trigger, a re-entry rule,
// an optional goal and a list of steps forming a graph without cycles. Validated by the API, stored
// as one immutable AutomationVersion, read back by the worker's runtime and the dry run.

export const MAX_STEPS = 100;
export const MAX_CONDITIONS = 20;
export const MAX_SUBJECT_LENGTH = 998;
export const MAX_HTML_BYTES = 512 * 1024;
export const MAX_FIELD_LENGTH = 128;
export const MAX_VALUE_LENGTH = 1000;
/** Longest single wait: a year. */
export const MAX_WAIT_SECONDS = 366 * 86_400;

// One character class, anchored: linear (npm run lint:recheck).
const NAME_CHARS = /^[A-Za-z0-9_.:-]+$/;
const STEP_ID_CHARS = /^[A-Za-z0-9_-]+$/;
const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d$/;
const DATE_PROPERTY = /^(createdAt|properties\.[^.]+)$/;

const eventNameField = z.string().min(1).max(100).regex(NAME_CHARS, 'may hold only letters, digits and _ . : -');
const idField = z.string().min(1).max(128);
const stepId = z.string().min(1).max(64).regex(STEP_ID_CHARS, 'may hold only letters, digits, _ and -');
const scalar = z.union([z.string().max(MAX_VALUE_LENGTH), z.number().finite(), z.boolean()]);

export const conditionOperators = ['equals', 'notEquals', 'contains', 'exists', 'notExists', 'gt', 'gte', 'lt', 'lte'] as const;

/**
 * One test on the contact (`email`, `firstName`, `lastName`, `subscribed`, or `properties.<key>`)
 * or on the trigger event's properties (`<key>`, dots for nesting).
 */
export const propertyCondition = z.strictObject({
  source: z.enum(['contact', 'event']),
  field: z.string().min(1).max(MAX_FIELD_LENGTH),
  operator: z.enum(conditionOperators),
  value: scalar.optional(),
});
export type PropertyCondition = z.infer<typeof propertyCondition>;

/**
 * Conditions that read a segment or the email activity (segment-sql.ts) cost a query each; a
 * definition holds at most this many, trigger filter and branches together.
 */
export const MAX_SEGMENT_CONDITIONS_PER_DEFINITION = 10;

/** Membership of the contact in a segment of the team (a contact of another book is not in it). */
export const segmentMembershipCondition = z.strictObject({
  source: z.literal('segment'),
  segmentId: idField.describe("A segment of the team; a contact of another book than the segment's is not in it"),
  operator: z.enum(['in', 'notIn']),
});
export type SegmentMembershipCondition = z.infer<typeof segmentMembershipCondition>;

/** The segment filter's email activity operators: one rule for segments and automations. */
export const emailActivityOperators = EMAIL_ACTIVITY_OPERATORS;
const CAMPAIGN_OPERATORS: readonly string[] = ['openedCampaign', 'clickedCampaign', 'notOpenedCampaign', 'notClickedCampaign'];

/** Engagement: the contact's address delivered / opened / clicked within N days, or opened / clicked a campaign. */
export const emailActivityCondition = z
  .strictObject({
    source: z.literal('emailActivity'),
    operator: z.enum(emailActivityOperators).describe("As the segment filter's emailActivity operators (docs/audience.md)"),
    value: z
      .union([z.number().int().min(1).max(MAX_ACTIVITY_DAYS), z.string().min(1).max(64)])
      .describe("*Within: a number of days (1 to 365) counted back from the step's time; *Campaign: a campaign id of the team"),
  })
  .superRefine((c, ctx) => {
    const campaign = CAMPAIGN_OPERATORS.includes(c.operator);
    if (campaign && typeof c.value !== 'string')
      ctx.addIssue({ code: 'custom', path: ['value'], message: `${c.operator} takes a campaign id` });
    if (!campaign && typeof c.value !== 'number')
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `${c.operator} takes a whole number of days from 1 to ${MAX_ACTIVITY_DAYS}`,
      });
  });
export type EmailActivityBranchCondition = z.infer<typeof emailActivityCondition>;

export const condition = z.union([propertyCondition, segmentMembershipCondition, emailActivityCondition]);
export type Condition = z.infer<typeof condition>;

/** Segment and email activity conditions: each is a query when evaluated. */
export const isQueryCondition = (c: Condition): c is SegmentMembershipCondition | EmailActivityBranchCondition =>
  c.source === 'segment' || c.source === 'emailActivity';

/** All (default) or any of the conditions. */
export const conditionGroup = z.strictObject({
  match: z.enum(['all', 'any']).default('all'),
  conditions: z.array(condition).min(1).max(MAX_CONDITIONS),
});
export type ConditionGroup = z.infer<typeof conditionGroup>;

export const trigger = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('event'),
    event: eventNameField.describe('The event name that enrolls the contact (custom or built-in)'),
    filter: conditionGroup.optional().describe("Conditions on the event's properties (source `event`) or the contact"),
  }),
  z.strictObject({
    type: z.literal('contactAdded'),
    contactBookId: idField.describe('Enrolls each contact added to this book'),
  }),
  z.strictObject({
    type: z.literal('segmentEntered'),
    segmentId: idField.describe(
      'Enrolls a contact when it comes to match this segment of the team (it did not before); the members at activation do not enroll',
    ),
  }),
  z.strictObject({
    type: z.literal('date'),
    contactBookId: idField.describe('Each contact of this book'),
    property: z
      .string()
      .min(1)
      .max(MAX_FIELD_LENGTH)
      .regex(DATE_PROPERTY, '`createdAt` or `properties.<key>`')
      .describe('`createdAt`, or `properties.<key>` holding an ISO date (YYYY-MM-DD, or a date-time: its first ten characters)'),
    offsetDays: z.number().int().min(-365).max(365).describe('Days after (negative: before) the date'),
    time: z
      .string()
      .max(5)
      .regex(TIME_OF_DAY, 'HH:MM, 24-hour')
      .optional()
      .describe("The time of day in the contact's zone (default 09:00)"),
    timezoneProperty: z
      .string()
      .min(1)
      .max(MAX_FIELD_LENGTH)
      .optional()
      .describe('The contact property holding an IANA time zone (default `timezone`); absent or unknown: UTC'),
  }),
]);
export type Trigger = z.infer<typeof trigger>;

export const reEntry = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('once') }),
  z.strictObject({ mode: z.literal('everyTime') }),
  z.strictObject({ mode: z.literal('oncePerPeriod'), periodSeconds: z.number().int().min(60).max(MAX_WAIT_SECONDS) }),
]);
export type ReEntry = z.infer<typeof reEntry>;

const next = z
  .string()
  .min(1)
  .max(64)
  .nullable()
  .optional()
  .describe('The step after this one: a step id, null to end the run; left out, the next step in the list');

const sendEmailStep = z
  .strictObject({
    id: stepId,
    type: z.literal('sendEmail'),
    from: z.string().min(3).max(320).describe("The sender, on one of the team's verified domains"),
    subject: z.string().min(1).max(MAX_SUBJECT_LENGTH).optional(),
    html: z
      .string()
      .min(1)
      .max(MAX_HTML_BYTES)
      .refine((s) => Buffer.byteLength(s) <= MAX_HTML_BYTES, `html must be at most ${MAX_HTML_BYTES / 1024} KB`)
      .optional(),
    templateId: idField.optional(),
    replyTo: z.string().min(3).max(320).optional(),
    next,
  })
  .superRefine((s, ctx) => {
    if (s.templateId === undefined && (s.subject === undefined || s.html === undefined))
      ctx.addIssue({ code: 'custom', path: ['html'], message: 'give subject and html, or templateId' });
    if (s.templateId !== undefined && s.html !== undefined)
      ctx.addIssue({ code: 'custom', path: ['templateId'], message: 'give html or templateId, not both' });
  });

const waitStep = z
  .strictObject({
    id: stepId,
    type: z.literal('wait'),
    seconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).optional().describe('Wait this long'),
    untilTime: z
      .string()
      .max(5)
      .regex(TIME_OF_DAY, 'HH:MM, 24-hour')
      .optional()
      .describe("Wait until this time of day in the contact's time zone"),
    timezoneProperty: z
      .string()
      .min(1)
      .max(MAX_FIELD_LENGTH)
      .optional()
      .describe('The contact property holding an IANA time zone (default `timezone`); absent or unknown: UTC'),
    next,
  })
  .superRefine((s, ctx) => {
    if ((s.seconds === undefined) === (s.untilTime === undefined))
      ctx.addIssue({ code: 'custom', path: ['seconds'], message: 'give seconds or untilTime' });
  });

const waitForEventStep = z.strictObject({
  id: stepId,
  type: z.literal('waitForEvent'),
  event: eventNameField,
  timeoutSeconds: z.number().int().min(1).max(MAX_WAIT_SECONDS),
  next,
  timeoutNext: next.describe('The step after a timeout: a step id, or null (default) to end the run'),
});

const branchStep = z.strictObject({
  id: stepId,
  type: z.literal('branch'),
  condition: conditionGroup,
  then: next,
  else: next,
});

const updateContactStep = z.strictObject({
  id: stepId,
  type: z.literal('updateContact'),
  properties: z
    .record(z.string().min(1).max(MAX_FIELD_LENGTH), z.union([scalar, z.null()]))
    .refine((p) => Object.keys(p).length >= 1 && Object.keys(p).length <= 50, 'set 1 to 50 properties'),
  next,
});

const bookStep = (type: 'addToBook' | 'removeFromBook') =>
  z.strictObject({ id: stepId, type: z.literal(type), contactBookId: idField, next });

const webhookStep = z.strictObject({
  id: stepId,
  type: z.literal('webhook'),
  payload: z
    .record(z.string().max(MAX_FIELD_LENGTH), scalar)
    .refine((p) => Object.keys(p).length <= 50, 'at most 50 keys')
    .optional()
    .describe('Extra fields of the `automation.webhook` event'),
  next,
});

const exitStep = z.strictObject({ id: stepId, type: z.literal('exit') });

export const step = z.union([
  sendEmailStep,
  waitStep,
  waitForEventStep,
  branchStep,
  updateContactStep,
  bookStep('addToBook'),
  bookStep('removeFromBook'),
  webhookStep,
  exitStep,
]);
export type Step = z.infer<typeof step>;
export type StepType = Step['type'];

export const definition = z
  .strictObject({
    trigger,
    reEntry: reEntry.default({ mode: 'once' }),
    goal: z
      .strictObject({ event: eventNameField })
      .optional()
      .describe("An event of the contact that ends the run (COMPLETED, reason 'goal')"),
    steps: z.array(step).min(1).max(MAX_STEPS),
  })
  .superRefine((d, ctx) => {
    for (const problem of graphProblems(d.steps))
      ctx.addIssue({ code: 'custom', path: ['steps', ...problem.path], message: problem.message });
    const queries = queryConditions(d);
    if (queries.length > MAX_SEGMENT_CONDITIONS_PER_DEFINITION)
      ctx.addIssue({
        code: 'custom',
        path: queries[MAX_SEGMENT_CONDITIONS_PER_DEFINITION].path,
        message: `at most ${MAX_SEGMENT_CONDITIONS_PER_DEFINITION} segment and email activity conditions per automation`,
      });
  });
export type Definition = z.infer<typeof definition>;

/** The segment and email activity conditions of a definition (trigger filter and branches), each with its path. */
export function queryConditions(d: {
  trigger: Trigger;
  steps: Step[];
}): { condition: SegmentMembershipCondition | EmailActivityBranchCondition; path: (string | number)[] }[] {
  const out: { condition: SegmentMembershipCondition | EmailActivityBranchCondition; path: (string | number)[] }[] = [];
  const collect = (group: ConditionGroup, path: (string | number)[]) =>
    group.conditions.forEach((c, i) => (isQueryCondition(c) ? out.push({ condition: c, path: [...path, 'conditions', i] }) : undefined));
  if (d.trigger.type === 'event' && d.trigger.filter) collect(d.trigger.filter, ['trigger', 'filter']);
  d.steps.forEach((s, i) => (s.type === 'branch' ? collect(s.condition, ['steps', i, 'condition']) : undefined));
  return out;
}

export { successors };

/** Unique ids, known targets, no cycle (so every run ends): each problem with its path. */
function graphProblems(steps: Step[]): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const index = new Map<string, number>();
  steps.forEach((s, i) => {
    if (index.has(s.id)) problems.push({ path: [i, 'id'], message: `repeats the id of step ${index.get(s.id)}` });
    else index.set(s.id, i);
  });
  if (problems.length) return problems;
  const edges = steps.map((_, i) =>
    successors(steps, i).flatMap(({ field, to }) => {
      if (to === null) return [];
      const target = index.get(to);
      if (target === undefined) {
        problems.push({ path: [i, field], message: `no step has the id "${to}"` });
        return [];
      }
      return [target];
    }),
  );
  if (problems.length) return problems;
  // Iterative depth-first search: 0 unseen, 1 on the path, 2 done.
  const state = new Array<number>(steps.length).fill(0);
  for (let root = 0; root < steps.length; root++) {
    if (state[root]) continue;
    const stack: { node: number; edge: number }[] = [{ node: root, edge: 0 }];
    state[root] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (top.edge >= edges[top.node].length) {
        state[top.node] = 2;
        stack.pop();
        continue;
      }
      const to = edges[top.node][top.edge++];
      if (state[to] === 1) {
        problems.push({ path: [top.node], message: `step "${steps[top.node].id}" leads back to "${steps[to].id}": loops are not allowed` });
        return problems;
      }
      if (state[to] === 0) {
        state[to] = 1;
        stack.push({ node: to, edge: 0 });
      }
    }
  }
  return problems;
}

/** The step of this id in a stored definition. */
export function stepById(d: Definition, id: string): { step: Step; index: number } | null {
  const index = d.steps.findIndex((s) => s.id === id);
  return index < 0 ? null : { step: d.steps[index], index };
}

/** The next step after `field` of the step at `index`, or null (end). */
export function nextStepId(d: Definition, index: number, field = 'next'): string | null {
  return successors(d.steps, index).find((e) => e.field === field)?.to ?? null;
}
