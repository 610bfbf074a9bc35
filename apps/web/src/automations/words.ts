// An automation's definition in words, for the list, the builder and the run log. Every function
// takes what the API answered as plain data: a trigger or condition of a kind this dashboard does
// not know yet (the API gains kinds before the dashboard does) is still shown, in words, read-only.

type Loose = Record<string, unknown>;

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');

/** "5 days", "2 hours", "90 seconds": the largest whole unit. */
export function durationWords(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  for (const [size, name] of units)
    if (seconds >= size && seconds % size === 0) return `${seconds / size} ${name}${seconds / size === 1 ? '' : 's'}`;
  return `${seconds} seconds`;
}

const camelWords = (s: string) => s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Names for the ids a definition holds (books, segments, campaigns); the id itself when unknown. */
export interface Names {
  book: (id: string) => string;
  segment: (id: string) => string;
  campaign: (id: string) => string;
}
const named = (names: Partial<Names>): Names => ({ book: (id) => id, segment: (id) => id, campaign: (id) => id, ...names });

/** "the day the contact was created" or "the date in the contact property “renewsAt”", for a date trigger's property. */
export const dateWords = (property: string) =>
  property === 'createdAt'
    ? 'the day the contact was created'
    : `the date in the contact property “${property.replace(/^properties\./, '')}”`;

/** Words for any trigger: the known kinds, and anything else by its type and its fields. */
export function triggerWords(trigger: Loose, given: Partial<Names> = {}): string {
  const names = named(given);
  switch (trigger.type) {
    case 'event':
      return `When the event “${str(trigger.event)}” is recorded${trigger.filter ? ` and ${groupWords(trigger.filter as Loose, names)}` : ''}`;
    case 'contactAdded':
      return `When a contact is added to the book “${names.book(str(trigger.contactBookId))}”`;
    case 'segmentEntered':
      return `When a contact enters the segment “${names.segment(str(trigger.segmentId))}”`;
    case 'date': {
      const days = typeof trigger.offsetDays === 'number' ? trigger.offsetDays : 0;
      const day = dateWords(str(trigger.property));
      const when = days === 0 ? `On ${day}` : `${plural(Math.abs(days), 'day')} ${days > 0 ? 'after' : 'before'} ${day}`;
      const zone = str(trigger.timezoneProperty) || 'timezone';
      return `${when}, at ${str(trigger.time) || '09:00'} in the contact's time zone (property “${zone}”), for each contact of the book “${names.book(str(trigger.contactBookId))}”`;
    }
    default:
      return `When “${camelWords(str(trigger.type) || 'unknown')}” happens (${fieldsWords(trigger, ['type'])})`;
  }
}

const OPERATORS: Record<string, string> = {
  equals: 'is',
  notEquals: 'is not',
  contains: 'contains',
  exists: 'is set',
  notExists: 'is not set',
  gt: 'is more than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  in: 'is in',
  notIn: 'is not in',
};
export const operatorWords = (op: string) => OPERATORS[op] ?? camelWords(op);
export const operatorTakesValue = (op: string) => op !== 'exists' && op !== 'notExists';

/** The email activity operators (as the segment filter's), each as what the contact did or did not do. */
export const EMAIL_ACTIVITY: Record<string, { words: string; takes: 'days' | 'campaign' }> = {
  openedWithin: { words: 'opened an email in the last', takes: 'days' },
  clickedWithin: { words: 'clicked a link in an email in the last', takes: 'days' },
  deliveredWithin: { words: 'was delivered an email in the last', takes: 'days' },
  notOpenedWithin: { words: 'did not open an email in the last', takes: 'days' },
  notClickedWithin: { words: 'did not click a link in an email in the last', takes: 'days' },
  notDeliveredWithin: { words: 'was not delivered an email in the last', takes: 'days' },
  openedCampaign: { words: 'opened the campaign', takes: 'campaign' },
  clickedCampaign: { words: 'clicked a link in the campaign', takes: 'campaign' },
  notOpenedCampaign: { words: 'did not open the campaign', takes: 'campaign' },
  notClickedCampaign: { words: 'did not click a link in the campaign', takes: 'campaign' },
};

function emailActivityWords(c: Loose, names: Names): string {
  const op = EMAIL_ACTIVITY[str(c.operator)];
  if (!op) return `email activity: ${camelWords(str(c.operator))} “${str(c.value)}”`;
  return op.takes === 'days'
    ? `the contact ${op.words} ${plural(Number(c.value), 'day')}`
    : `the contact ${op.words} “${names.campaign(str(c.value))}”`;
}

/** One condition: the known sources, and anything else by its fields. */
export function conditionWords(c: Loose, given: Partial<Names> = {}): string {
  const names = named(given);
  const value = operatorTakesValue(str(c.operator)) && c.value !== undefined ? ` “${str(c.value)}”` : '';
  switch (c.source) {
    case 'contact':
      return `the contact's ${str(c.field).replace(/^properties\./, '')} ${operatorWords(str(c.operator))}${value}`;
    case 'event':
      return `the event's ${str(c.field)} ${operatorWords(str(c.operator))}${value}`;
    case 'segment':
      return `the contact ${operatorWords(str(c.operator))} the segment “${names.segment(str(c.segmentId))}”`;
    case 'emailActivity':
      return emailActivityWords(c, names);
    default:
      return `${camelWords(str(c.source) || 'condition')}: ${fieldsWords(c, ['source'])}`;
  }
}

function groupWords(group: Loose, names: Partial<Names>): string {
  const conditions = Array.isArray(group.conditions) ? (group.conditions as Loose[]) : [];
  if (conditions.length === 1) return conditionWords(conditions[0], names);
  return `${group.match === 'any' ? 'any' : 'all'} of: ${conditions.map((c) => conditionWords(c, names)).join('; ')}`;
}

function fieldsWords(o: Loose, skip: string[]): string {
  return (
    Object.entries(o)
      .filter(([k, v]) => !skip.includes(k) && v !== undefined && v !== null)
      .map(([k, v]) => `${camelWords(k)} ${typeof v === 'object' ? JSON.stringify(v) : str(v)}`)
      .join(', ') || 'no details'
  );
}

export function reEntryWords(r: Loose | undefined): string {
  if (!r || r.mode === 'once') return 'Once per contact, ever';
  if (r.mode === 'everyTime') return 'Every time the trigger happens';
  if (r.mode === 'oncePerPeriod') return `At most once every ${durationWords(Number(r.periodSeconds))}`;
  return camelWords(str(r.mode));
}

export const STEP_TYPES = [
  ['sendEmail', 'Send an email'],
  ['wait', 'Wait'],
  ['waitForEvent', 'Wait for an event'],
  ['branch', 'Branch on a condition'],
  ['updateContact', 'Update the contact'],
  ['addToBook', 'Add to a contact book'],
  ['removeFromBook', 'Remove from a contact book'],
  ['webhook', 'Call your webhooks'],
  ['exit', 'Exit'],
] as const;
export const stepTypeWords = (type: string) => STEP_TYPES.find(([t]) => t === type)?.[1] ?? camelWords(type);

/** One line saying what a step does. */
export function stepSummary(s: Loose, given: Partial<Names> = {}): string {
  const names = named(given);
  switch (s.type) {
    case 'sendEmail':
      return s.templateId ? `Template ${str(s.templateId)}, from ${str(s.from)}` : `“${str(s.subject)}” from ${str(s.from)}`;
    case 'wait':
      return s.seconds !== undefined
        ? `Wait ${durationWords(Number(s.seconds))}`
        : `Wait until ${str(s.untilTime)} in the contact's time zone (property “${str(s.timezoneProperty) || 'timezone'}”)`;
    case 'waitForEvent':
      return `Wait up to ${durationWords(Number(s.timeoutSeconds))} for “${str(s.event)}”`;
    case 'branch':
      return `If ${groupWords((s.condition as Loose) ?? {}, names)}`;
    case 'updateContact':
      return `Set ${Object.entries((s.properties as Loose) ?? {})
        .map(([k, v]) => `${k} = ${v === null ? '(removed)' : str(v)}`)
        .join(', ')}`;
    case 'addToBook':
      return `Add to “${names.book(str(s.contactBookId))}”`;
    case 'removeFromBook':
      return `Remove from “${names.book(str(s.contactBookId))}”`;
    case 'webhook':
      return 'Send an automation.webhook event to your webhooks';
    case 'exit':
      return 'End the run here';
    default:
      return fieldsWords(s, ['id', 'type']);
  }
}

const OUTCOMES: Record<string, string> = {
  sent: 'email sent',
  waited: 'started waiting',
  'event-arrived': 'the event arrived',
  'timed-out': 'timed out',
  then: 'condition held',
  else: 'condition did not hold',
  updated: 'contact updated',
  added: 'added to the book',
  removed: 'removed from the book',
  webhook: 'webhook event recorded',
  exit: 'exit step',
  goal: 'goal reached',
  unsubscribed: 'contact unsubscribed',
  suppressed: 'address suppressed',
  'contact-deleted': 'contact deleted',
  failed: 'failed',
  completed: 'completed',
};
export const outcomeWords = (o: string | null) => (o ? (OUTCOMES[o] ?? o) : '');

// Linear: no nested quantifiers (npm run lint:recheck).
const ISO_INSTANT = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z/g;
const SECONDS = /\b(\d{1,9}) s\b/g;

/**
 * The runtime's reason for a step ("waiting 86400 s, until 2026-12-08T05:43:04.984Z") with its
 * instants in the reader's time and its seconds as days or hours.
 */
export function detailWords(detail: string, formatInstant: (iso: string) => string): string {
  return detail.replace(ISO_INSTANT, (iso) => formatInstant(iso)).replace(SECONDS, (_, n: string) => durationWords(Number(n)));
}

/** "step 3, Send an email" for a step id of these steps; the id in quotes for one no longer in them. */
export function stepLabel(steps: readonly { id: string; type: string }[], id: string): string {
  const i = steps.findIndex((s) => s.id === id);
  return i < 0 ? `“${id}”` : `step ${i + 1}, ${stepTypeWords(steps[i].type).toLowerCase()}`;
}
