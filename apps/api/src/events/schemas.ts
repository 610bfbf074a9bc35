import { z } from 'zod';
import { normalisedEmailField } from '@mailrail/domain/emails/address';
import { isReservedEventName, reservedEventNamePrefixes } from '@mailrail/domain/events/builtin-events';
import { MAX_ID_LENGTH, MAX_KEY_LENGTH, idString } from '../http/limits';
import { intString, isoDateTime } from '../http/query';

// The wire shape of custom events (docs/custom-events.md). Names and fields follow the brief of
// issue 45 and Resend's events API where they agree (Resend's `event` is our `name`, its `payload`
// our `properties`); the caps bound what one event may cost to store and to match later.

export const MAX_EVENT_NAME_LENGTH = 100;
export const MAX_EVENTS_PER_BATCH = 100;
/** Properties as JSON text, in bytes. */
export const MAX_EVENT_PROPERTIES_BYTES = 16 * 1024;
/** Nesting of objects and arrays inside properties (properties itself is depth 1). */
export const MAX_EVENT_PROPERTIES_DEPTH = 5;
/** Keys and array items across all of properties. */
export const MAX_EVENT_PROPERTIES_ENTRIES = 500;
/** How far ahead of the server's clock an occurredAt may be (clocks drift; "next year" is a bug). */
export const MAX_OCCURRED_AT_AHEAD_MS = 24 * 3_600_000;

// One character class, anchored: linear (npm run lint:recheck).
const EVENT_NAME_CHARS = /^[A-Za-z0-9_.:-]+$/;

const anyEventName = z.string().min(1).max(MAX_EVENT_NAME_LENGTH).regex(EVENT_NAME_CHARS, 'may hold only letters, digits and _ . : -');

export const eventName = anyEventName
  .refine(
    (n) => !isReservedEventName(n),
    `names starting with ${reservedEventNamePrefixes.map((p) => `"${p}"`).join(', ')} are mailrail's own (built-in events)`,
  )
  .describe(
    `The event's name, as automations will match it (\`user.signed_up\`, \`order:paid\`): 1 to ${MAX_EVENT_NAME_LENGTH} of A-Z a-z 0-9 _ . : -; ` +
      `not under ${reservedEventNamePrefixes.join(' ')} (mailrail's built-in events)`,
  );

/** Why these properties are refused, or null: walked without recursion, stopping at the first cap. */
function propertiesProblem(properties: Record<string, unknown>): string | null {
  const stack: { value: unknown; depth: number }[] = [{ value: properties, depth: 1 }];
  let entries = 0;
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_EVENT_PROPERTIES_DEPTH) return `nest at most ${MAX_EVENT_PROPERTIES_DEPTH} levels of objects and arrays`;
    if (!Array.isArray(value) && Object.keys(value).some((k) => k.length > MAX_KEY_LENGTH))
      return `have keys of at most ${MAX_KEY_LENGTH} characters`;
    const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
    entries += children.length;
    if (entries > MAX_EVENT_PROPERTIES_ENTRIES) return `hold at most ${MAX_EVENT_PROPERTIES_ENTRIES} keys and array items in all`;
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  if (Buffer.byteLength(JSON.stringify(properties)) > MAX_EVENT_PROPERTIES_BYTES)
    return `are at most ${MAX_EVENT_PROPERTIES_BYTES / 1024} KB as JSON`;
  return null;
}

const properties = z
  .record(z.string().max(MAX_KEY_LENGTH), z.unknown())
  .superRefine((value, ctx) => {
    const problem = propertiesProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `properties must ${problem}` });
  })
  .describe(
    `Any JSON object about what happened (Resend's \`payload\`): at most ${MAX_EVENT_PROPERTIES_BYTES / 1024} KB as JSON, ` +
      `${MAX_EVENT_PROPERTIES_DEPTH} levels deep, ${MAX_EVENT_PROPERTIES_ENTRIES} keys and array items in all`,
  );

export const eventInput = z
  .strictObject({
    name: eventName,
    eventId: z
      .string()
      .min(1)
      .max(MAX_ID_LENGTH)
      .optional()
      .describe(
        'Your id of this event: sent again (a retry) it stores nothing new and answers the first id; sent with another event, 409. Kept EVENT_RETENTION_DAYS',
      ),
    contactId: idString().optional().describe('The contact the event is about; or give email and contactBookId'),
    email: normalisedEmailField().optional().describe('With contactBookId: the contact of this address in that book'),
    contactBookId: idString().optional(),
    createContact: z
      .boolean()
      .optional()
      .describe('With email: create the contact when the book has none of this address (as POST .../contacts would); default false'),
    properties: properties.optional(),
    occurredAt: isoDateTime().optional().describe('When it happened (default: when received); at most 24 hours ahead of the server clock'),
  })
  .superRefine((e, ctx) => {
    const byEmail = e.email !== undefined || e.contactBookId !== undefined;
    if (e.contactId !== undefined && byEmail)
      ctx.addIssue({ code: 'custom', path: ['contactId'], message: 'give contactId, or email and contactBookId, not both' });
    else if (e.contactId === undefined && !byEmail)
      ctx.addIssue({ code: 'custom', path: ['contactId'], message: 'name the contact: contactId, or email and contactBookId' });
    else if (byEmail && e.email === undefined) ctx.addIssue({ code: 'custom', path: ['email'], message: 'required with contactBookId' });
    else if (byEmail && e.contactBookId === undefined)
      ctx.addIssue({ code: 'custom', path: ['contactBookId'], message: 'required with email' });
    if (e.createContact && e.email === undefined)
      ctx.addIssue({ code: 'custom', path: ['createContact'], message: 'only with email and contactBookId' });
  });
export type EventInput = z.infer<typeof eventInput>;

export const eventBatch = z.strictObject({
  events: z
    .array(eventInput)
    .min(1, 'No events provided')
    .max(MAX_EVENTS_PER_BATCH, `Cannot record more than ${MAX_EVENTS_PER_BATCH} events in a single request`),
});

/** The body of POST /api/v1/events: one event, or `{ events: [...] }`. */
export const recordEventsBody = z.union([eventInput, eventBatch]);

/** Is this body a batch (decided by its `events` key, so each shape's own errors are reported)? */
export const isBatchBody = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && !Array.isArray(body) && 'events' in body;

export const eventPath = z.object({ eventId: idString().describe("mailrail's id of the event (`id`, as POST answered it)") });

export const listEventsQuery = z.object({
  limit: intString(1, 100).default(50).describe('Events per page (at most 100)'),
  cursor: z.string().max(200).optional().describe("`nextCursor` of the previous page: the events older than that page's"),
  name: anyEventName.optional().describe('Only events of this name'),
  source: z.enum(['api', 'mailrail']).optional().describe('Only events sent through the API (`api`), or only built-in ones (`mailrail`)'),
  contactId: idString().optional().describe('Only events of this contact'),
  email: normalisedEmailField().optional().describe("Only events of the team's contacts of this address (in any book)"),
  startDate: isoDateTime().optional().describe('Only events that occurred at or after this instant'),
  endDate: isoDateTime().optional().describe('Only events that occurred before this instant'),
});
export type ListEventsQuery = z.infer<typeof listEventsQuery>;
