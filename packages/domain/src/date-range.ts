// Dates from requests are kept to years 1970..9999 (UTC): every one fits JavaScript's Date and
// PostgreSQL's timestamptz, and prints as a plain 4-digit ISO 8601 year. Year 0000 or 10000 used
// to reach PostgreSQL and come back as a 500.

export const SUPPORTED_YEARS = { min: 1970, max: 9999 } as const;

export const UNSUPPORTED_DATE_MESSAGE = `must be a date between the years ${SUPPORTED_YEARS.min} and ${SUPPORTED_YEARS.max}`;

/** True for a valid Date whose UTC year is within SUPPORTED_YEARS. */
export function isSupportedInstant(d: Date): boolean {
  const t = d.getTime();
  if (Number.isNaN(t)) return false;
  const year = d.getUTCFullYear();
  return year >= SUPPORTED_YEARS.min && year <= SUPPORTED_YEARS.max;
}

/** The largest PostgreSQL int4: integer ids and filters from requests are bounded by it. */
export const INT4_MAX = 2_147_483_647;
