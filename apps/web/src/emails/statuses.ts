import { EmailSource, EmailStatus } from '@mailrail/platform/db/generated/enums';

/** The status filter's choices: the database's own enum, in its order. */
export const EMAIL_STATUSES = Object.values(EmailStatus);

/** The source filter's choices (the database's enum, in its order) and how the pages name them. */
export const EMAIL_SOURCES = Object.values(EmailSource);
export const EMAIL_SOURCE_LABELS: Record<EmailSource, string> = {
  API: 'API',
  SMTP: 'SMTP relay',
  CAMPAIGN: 'Campaign',
  SYSTEM: 'Sent by mailrail',
  AUTOMATION: 'Automation',
};
