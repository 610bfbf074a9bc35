import { insertEventsSql } from './insert-events';

// contact.created, contact.subscribed and contact.unsubscribed, written by the statement that
// changes the contact (a CTE beside its contact.* webhook outbox CTE), so they commit with the
// change and a statement that changes nothing (a replayed request, a second unsubscribe) writes none.
//   created       the row was inserted;
//   subscribed    `subscribed` became true (on creation too, unless the book awaits a double opt-in
//                 confirmation: then when it is confirmed), so "subscribed" means one thing
//                 whichever way the contact got there;
//   unsubscribed  the contact got an unsubscribe reason (unsubscribed, bounced, complained); not
//                 for a contact created unsubscribed, which never was subscribed.

export interface ContactEventsSql {
  /** A CTE with the contact's columns after the change (c.*). */
  source: string;
  teamIdSql: string;
  /** Boolean SQL on `s` (the source row): the contact was inserted by this statement. */
  insertedSql: string;
  /** Boolean SQL on `s`: subscribed before the change (false for an inserted row). */
  wasSubscribedSql: string;
  /** Boolean SQL on `s`: had an unsubscribe reason before the change (true for an inserted row). */
  hadReasonSql: string;
  /** A timestamptz parameter: now. */
  nowParam: string;
  /** A text parameter: emailIdPrefixAt(now). */
  idPrefixParam: string;
}

/** A data-modifying CTE body: the contact events of the rows of `source`. */
export function contactEventsSql(o: ContactEventsSql): string {
  return insertEventsSql(
    `SELECT NULL::text AS id, (${o.teamIdSql})::int AS "teamId", x.name, s.id AS "contactId", s."contactBookId", x.properties,
            NULL::text AS "externalId", 'mailrail' AS source, NULL::timestamptz AS "occurredAt"
       FROM ${o.source} s
       CROSS JOIN LATERAL (VALUES
         ('contact.created', jsonb_build_object('email', s.email, 'subscribed', s.subscribed), ${o.insertedSql}),
         ('contact.subscribed', jsonb_build_object('email', s.email), s.subscribed AND NOT (${o.wasSubscribedSql})),
         ('contact.unsubscribed', jsonb_build_object('email', s.email, 'reason', s."unsubscribeReason"),
            s."unsubscribeReason" IS NOT NULL AND NOT (${o.hadReasonSql}))
       ) AS x(name, properties, happened)
      WHERE x.happened`,
    { idPrefixSql: o.idPrefixParam, createdAtSql: o.nowParam },
  );
}
