// SQL fragments shared by every statement that changes contacts: the API (upserts, deletes) and
// the worker (unsubscribing on bounces) must describe a contact and report its change the same way.
import { isoUtcSql } from '@mailrail/platform/db/sql/time';

/**
 * The columns of the public contact object, named as on the wire: `json_agg` of rows selecting
 * these builds a list more cheaply than one json_build_object call per row.
 */
export function contactColumnsSql(alias: string): string {
  const a = alias;
  return `${a}.id, ${a}."firstName", ${a}."lastName", ${a}.email, ${a}.subscribed, ${a}."unsubscribeReason", ${a}.properties,
    ${a}."contactBookId", ${isoUtcSql(`${a}."createdAt"`)} AS "createdAt", ${isoUtcSql(`${a}."updatedAt"`)} AS "updatedAt"`;
}

/** The public contact object (json keeps the key order of the wire format; jsonb is for storing). */
export function contactJsonSql(alias: string, type: 'json' | 'jsonb' = 'json'): string {
  const a = alias;
  return `${type}_build_object('id', ${a}.id, 'firstName', ${a}."firstName", 'lastName', ${a}."lastName", 'email', ${a}.email,
    'subscribed', ${a}.subscribed, 'unsubscribeReason', ${a}."unsubscribeReason", 'properties', ${a}.properties,
    'contactBookId', ${a}."contactBookId", 'createdAt', ${isoUtcSql(`${a}."createdAt"`)}, 'updatedAt', ${isoUtcSql(`${a}."updatedAt"`)})`;
}

/**
 * A data-modifying CTE body that writes one `WebhookEvent` outbox row per row of `source` (a CTE
 * returning contact columns), in the same statement, hence the same transaction, as the change.
 * Event ids come from `idsParam` (a text[] of newId()s, one per expected row); should more rows
 * change than expected, the extra ones get an id made in SQL rather than no event.
 */
export function contactEventsInsertSql(opts: {
  source: string;
  teamIdSql: string;
  typeSql: string;
  idsParam: string;
  /** A Date parameter. */ nowParam: string;
}): string {
  return `INSERT INTO "WebhookEvent" (id, "teamId", type, data, "createdAt")
    SELECT coalesce(e.id, substr(md5(random()::text || s.id), 1, 24)), ${opts.teamIdSql}, ${opts.typeSql}, ${contactJsonSql('s', 'jsonb')}, ${opts.nowParam}::timestamptz
    FROM (SELECT src.*, row_number() OVER () AS n FROM ${opts.source} src) s
    LEFT JOIN unnest(${opts.idsParam}::text[]) WITH ORDINALITY AS e(id, n) ON e.n = s.n`;
}
