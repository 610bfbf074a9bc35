import { EmailStatus } from '@mailrail/core/db/generated/enums';

/** The status filter's choices: the database's own enum, in its order. */
export const EMAIL_STATUSES = Object.values(EmailStatus);
