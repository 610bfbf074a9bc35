// Time in SQL. Every DateTime column is timestamptz(3): compare and assign JS Dates and now()
// directly. Only text output needs a zone: to_char formats in the session's TimeZone, so a wire
// timestamp is formatted from the UTC wall time.

/** A timestamptz expression as the ISO 8601 string Prisma would answer (UTC, milliseconds, Z). */
export const isoUtcSql = (expr: string) => `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The UTC calendar day of a timestamptz expression as `YYYY-MM-DD` (the daily series' key). */
export const utcDateSql = (expr: string) => `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
