import { importMapping, importTarget } from '@mailrail/domain/audience/imports/csv-mapping';
import { MAX_PROPERTY_NAME_LENGTH } from '@mailrail/domain/audience/contact-input';
import { PROPERTY_TYPES } from '@mailrail/domain/audience/properties/contact-properties';
import { z } from 'zod';
import { MAX_ID_LENGTH } from '../http/limits';

const pathId = z.string().min(1).max(MAX_ID_LENGTH);
export const bookPath = z.object({ contactBookId: pathId });
export const importPath = z.object({ contactBookId: pathId, importId: pathId });

/** The preview reads at most this much of the file (the client sends the file's first 64 KB). */
export const PREVIEW_MAX_BYTES = 64 * 1024;
/** The `mapping` form field: a JSON object of at most this many characters. */
const MAX_MAPPING_LENGTH = 256 * 1024;
/** CONTACT_IMPORT_MAX_MB's largest setting, as the document's cap of the file part (the configured one applies). */
const MAX_FILE_DOC_LENGTH = 4096 * 1024 * 1024;

/** Property name → its confirmed type (the preview's `types`, as the user confirmed them). */
const propertyTypes = z.record(z.string().max(MAX_PROPERTY_NAME_LENGTH), z.enum(PROPERTY_TYPES));

/** A multipart text field holding JSON, parsed (then piped into its schema); `message` when it is not JSON. */
const jsonFormField = (message: string) =>
  z
    .string()
    .max(MAX_MAPPING_LENGTH)
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
    });

// The form fields of POST .../imports besides `file` (multipart text fields are strings).
export const uploadFields = z.object({
  mapping: jsonFormField('mapping must be a JSON object of header → target')
    .pipe(importMapping)
    .optional()
    .describe(
      'JSON object: CSV header → `email`, `firstName`, `lastName`, `subscribed`, `properties.<name>` or `ignore`; headers left out are guessed',
    ),
  onExisting: z.enum(['skip', 'update']).default('skip').describe('What to do with a row whose address is already in the book'),
  propertyTypes: jsonFormField('propertyTypes must be a JSON object of property name → type').pipe(propertyTypes).optional(),
});

export const importStatus = z.enum(['queued', 'running', 'completed', 'failed']);

export const importView = z
  .object({
    id: z.string(),
    contactBookId: z.string(),
    fileName: z.string(),
    status: importStatus,
    onExisting: z.enum(['skip', 'update']),
    rowsRead: z.number().int(),
    created: z.number().int(),
    updated: z.number().int(),
    skipped: z.number().int(),
    rejected: z.number().int(),
    suppressed: z
      .number()
      .int()
      .describe(
        "Contacts taken (created, updated or skipped) whose address is on the team's suppression list: in the book, but no email reaches them (mailrail; not in useSend)",
      ),
    error: z.string().nullable(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .meta({ id: 'ContactImport' });
export type ImportView = z.infer<typeof importView>;

export const previewResponse = z.object({
  headers: z.array(z.string()),
  mapping: z.record(z.string(), importTarget),
  sample: z.array(z.array(z.string())).describe('Up to 5 data rows'),
  types: z
    .record(z.string(), z.enum(PROPERTY_TYPES))
    .describe(
      'Header → the type its values suggest (number, boolean or date when every value of the first 100 rows reads so, else string); confirm or change it in `propertyTypes`',
    ),
});

/** The multipart body as OpenAPI shows it (the route reads it as a stream, not through zod). */
export const uploadForm = z.object({
  file: z
    .string()
    .max(MAX_FILE_DOC_LENGTH)
    .describe('The CSV file (UTF-8; header row first), at most CONTACT_IMPORT_MAX_MB')
    .meta({ format: 'binary' }),
  mapping: z.string().max(MAX_MAPPING_LENGTH).optional().describe('JSON object: CSV header → target; headers left out are guessed'),
  onExisting: z.enum(['skip', 'update']).optional().describe('Default `skip`'),
  propertyTypes: z
    .string()
    .max(MAX_MAPPING_LENGTH)
    .optional()
    .describe(
      "JSON object: property name → `string`, `number`, `boolean` or `date`. Every property column is added to the book's registry (GET .../properties) with this type (string when none is given; an existing property keeps its type unless one is given)",
    ),
});
