import { z } from 'zod';
import {
  MAX_ADDRESS_FIELD_LENGTH,
  MAX_ID_LENGTH,
  MAX_KEY_LENGTH,
  MAX_NAME_LENGTH,
  MAX_SUBJECT_LENGTH,
  MAX_VALUE_LENGTH,
} from '../http/limits';
import { DOUBLE_OPT_IN_URL_PLACEHOLDER } from './double-opt-in-settings';

const RESERVED_VARIABLES = new Set(['email', 'firstname', 'lastname']);

/** Trimmed, `^[a-zA-Z0-9_]+$`, not a built-in name, de-duplicated case-insensitively (first spelling kept). */
const variables = z
  .array(z.string().max(MAX_KEY_LENGTH).trim())
  .max(200)
  .superRefine((names, ctx) => {
    names.forEach((name, i) => {
      if (!/^[a-zA-Z0-9_]+$/.test(name)) {
        ctx.addIssue({ code: 'custom', path: [i], message: `Invalid variable name "${name}": use letters, digits and underscores only` });
      } else if (RESERVED_VARIABLES.has(name.toLowerCase())) {
        ctx.addIssue({ code: 'custom', path: [i], message: `"${name}" is a built-in variable and cannot be declared` });
      }
    });
  })
  .transform((names) => {
    const seen = new Set<string>();
    return names.filter((n) => !seen.has(n.toLowerCase()) && seen.add(n.toLowerCase()));
  });

// Blank optional texts mean "not set" (null), as in useSend.
const blankToNull = (max: number) =>
  z
    .string()
    .max(max)
    .nullable()
    .transform((s) => (s === null || s.trim() === '' ? null : s.trim()));

const content = z
  .string()
  .max(200_000) // the confirmation email: a page of text, far below the email body cap
  .nullable()
  .transform((s) => (s === null || s.trim() === '' ? null : s))
  .refine((s) => s === null || DOUBLE_OPT_IN_URL_PLACEHOLDER.test(s), {
    message: 'Double opt-in email content must include the {{doubleOptInUrl}} placeholder',
  });

const bookFields = {
  name: z.string().trim().min(1, 'name is required').max(MAX_NAME_LENGTH),
  emoji: z.string().trim().max(32),
  properties: z.record(z.string().max(MAX_KEY_LENGTH), z.string().max(MAX_VALUE_LENGTH)),
  variables,
  doubleOptInEnabled: z.boolean(),
  doubleOptInFrom: blankToNull(MAX_ADDRESS_FIELD_LENGTH),
  doubleOptInSubject: blankToNull(MAX_SUBJECT_LENGTH),
  doubleOptInContent: content,
};

export const createContactBookBody = z.object({
  ...bookFields,
  emoji: bookFields.emoji.optional(),
  properties: bookFields.properties.optional(),
  variables: bookFields.variables.optional(),
  doubleOptInEnabled: bookFields.doubleOptInEnabled.optional(),
  doubleOptInFrom: bookFields.doubleOptInFrom.optional(),
  doubleOptInSubject: bookFields.doubleOptInSubject.optional(),
  doubleOptInContent: bookFields.doubleOptInContent.optional(),
});

export const updateContactBookBody = createContactBookBody.partial();

export type CreateContactBookInput = z.infer<typeof createContactBookBody>;
export type UpdateContactBookInput = z.infer<typeof updateContactBookBody>;

export const contactBookIdParams = z.object({ contactBookId: z.string().min(1).max(MAX_ID_LENGTH) });
