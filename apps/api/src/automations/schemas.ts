import { z } from 'zod';
import { AutomationRunStatus, AutomationStatus } from '@mailrail/platform/db/generated/enums';
import { reEntry, step, trigger } from '@mailrail/domain/automations/definition';
import { MAX_NAME_LENGTH, idString } from '../http/limits';
import { intString } from '../http/query';

// The wire shapes of /api/v1/automations (docs/automations.md). The definition itself (trigger,
// re-entry, goal, steps) is the domain's, shared with the worker that runs it.

const name = z.string().trim().min(1).max(MAX_NAME_LENGTH).describe('A name for people');

export const createAutomationBody = z.strictObject({
  name,
  trigger,
  reEntry: reEntry.optional().describe('once (default), everyTime, or oncePerPeriod with periodSeconds'),
  goal: z.strictObject({ event: z.string().min(1).max(100) }).optional(),
  steps: z.array(step).min(1).max(100),
});

export const updateAutomationBody = z
  .strictObject({
    name: name.optional(),
    trigger: trigger.optional(),
    reEntry: reEntry.optional(),
    goal: z
      .strictObject({ event: z.string().min(1).max(100) })
      .nullable()
      .optional(),
    steps: z.array(step).min(1).max(100).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one field');
export type UpdateAutomationBody = z.infer<typeof updateAutomationBody>;

export const automationPath = z.object({ automationId: idString() });
export const runPath = z.object({ automationId: idString(), runId: idString() });

export const listAutomationsQuery = z.object({
  limit: intString(1, 100).default(50),
  status: z.enum(AutomationStatus).optional(),
});

export const listRunsQuery = z.object({
  limit: intString(1, 100).default(50),
  cursor: z.string().max(200).optional().describe('`nextCursor` of the previous page'),
  status: z.enum(AutomationRunStatus).optional(),
  contactId: idString().optional(),
});

export const dryRunBody = z
  .strictObject({
    contactId: idString().optional().describe('The contact whose path to show'),
    email: z
      .string()
      .trim()
      .min(3)
      .max(320)
      .optional()
      .describe(
        "Instead of contactId: the team's contact of this address (in the trigger's book for a contactAdded trigger, else the newest)",
      ),
    event: z
      .strictObject({ properties: z.record(z.string().max(128), z.unknown()).optional() })
      .optional()
      .describe('The trigger event to assume (its properties), for event triggers'),
    arrivingEvents: z
      .array(z.string().min(1).max(100))
      .max(20)
      .optional()
      .describe('Event names assumed to arrive during wait-for-event steps (the others time out)'),
  })
  .refine((b) => (b.contactId === undefined) !== (b.email === undefined), { message: 'give contactId or email', path: ['contactId'] });
