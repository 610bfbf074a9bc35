// The one INSERT into "Event". Every source goes through it: POST /api/v1/events (rows from the
// request) and mailrail's built-in events (rows selected inside the statement that makes the change
// they report, so an event commits if and only if its change does, and a batch of a million is one
// set-based statement, not a million).

/**
 * A data-modifying statement (usable as a CTE body) that inserts one event per row of `rowsSql`, a
 * query yielding id (null: made here), "teamId", name, "contactId", "contactBookId", properties
 * (jsonb), "externalId" (the caller's eventId, or the source event's key such as
 * `ses:<SNS message id>`), source ('api' or 'mailrail') and "occurredAt" (null: now).
 * `idPrefixSql` is the time-ordered id prefix of now (emailIdPrefixAt, as a parameter): ids made
 * here are that prefix and 12 random hex characters, so they sort, and are pruned, by creation time
 * as the API's are. `createdAtSql` is now (a timestamptz parameter). `txid` is not written: its
 * default is the writing transaction's id, which orders the feed (event-feed.ts).
 */
export function insertEventsSql(rowsSql: string, opts: { idPrefixSql: string; createdAtSql: string; returning?: string }): string {
  return `INSERT INTO "Event" (id, "teamId", name, "contactId", "contactBookId", properties, "externalId", source, "occurredAt", "createdAt")
    SELECT coalesce(r.id, ${opts.idPrefixSql}::text || substr(md5(random()::text || r."contactId" || r.name), 1, 12)),
           r."teamId", r.name, r."contactId", r."contactBookId", coalesce(r.properties, '{}'::jsonb), r."externalId", r.source,
           coalesce(r."occurredAt", ${opts.createdAtSql}::timestamptz), ${opts.createdAtSql}::timestamptz
      FROM (${rowsSql}) r
    ${opts.returning ? `RETURNING ${opts.returning}` : ''}`;
}
