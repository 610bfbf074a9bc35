import { z } from 'zod';
import { MAX_ADDRESS_FIELD_LENGTH } from '@mailrail/domain/emails/address';

// Length caps of every free-text request field, in one place. They are far above what a real
// client sends, and they bound the work any rule (regex, parser, database index) does on a field.
// zod's .max() appears as maxLength in the OpenAPI document; a test fails when a request string
// has none.

export { MAX_ADDRESS_FIELD_LENGTH };

/** Ids of our rows (24 characters today), template and contact-book ids, idempotency keys. */
export const MAX_ID_LENGTH = 128;
/** Names and labels: campaign, template, contact book, webhook description, contact names. */
export const MAX_NAME_LENGTH = 255;
/** A subject or header value must fit on one RFC 5322 line (998 characters). */
export const MAX_SUBJECT_LENGTH = 998;
export const MAX_HEADER_VALUE_LENGTH = 998;
/** Header names, variable and property names. */
export const MAX_KEY_LENGTH = 128;
/** A template variable or contact property value. */
export const MAX_VALUE_LENGTH = 10_000;
/** HTML or text bodies: SES v2 takes at most 40 MB per message (EMAIL_MAX_MESSAGE_MB, 40 by default, is checked later). */
export const MAX_BODY_LENGTH = 40 * 1024 * 1024;
/** One base64 attachment: 40 MB of content is about 54 MB of base64 (BODY_LIMIT is 55 MB by default). */
export const MAX_ATTACHMENT_BASE64_LENGTH = 56 * 1024 * 1024;
/** Short free text: preview text, search terms. */
export const MAX_SHORT_TEXT_LENGTH = 1_000;
/** URLs (webhook endpoints). */
export const MAX_URL_LENGTH = 2_048;
/** A date-time or a natural-language schedule ("tomorrow 9am"). */
export const MAX_DATE_TEXT_LENGTH = 256;
/** A whole query-string value that is a comma-separated list (Node caps the request line near 16 KB anyway). */
export const MAX_QUERY_LIST_LENGTH = 16_384;
/** Query-string and path values that are numbers, dates or short tokens. */
export const MAX_QUERY_VALUE_LENGTH = 64;

/** A string id of ours (path parameter or body field). */
export const idString = () => z.string().min(1).max(MAX_ID_LENGTH);
