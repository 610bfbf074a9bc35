import { EmailStatus } from '@mailrail/platform/db/generated/enums';

/** The status filter's choices: the database's own enum, in its order. */
export const EMAIL_STATUSES = Object.values(EmailStatus);
