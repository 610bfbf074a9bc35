// The SMTP relay's AUTH username (the password is an API key): `mailrail`, or `usesend`, as
// useSend's SMTP clients are configured. The relay checks it; the dashboard's SMTP page shows it.
export const SMTP_USERNAME = 'mailrail';
export const SMTP_USERNAMES: ReadonlySet<string> = new Set([SMTP_USERNAME, 'usesend']);
