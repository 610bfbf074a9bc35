// The text the dashboard's email search looks in: the subject and every `to` address, lower-cased,
// one per line. Written with the row by the insert (create-emails.ts) and by the migration that
// added the column; searched with LIKE '%term%' through the trigram index on "Email"."searchText".

/** SQL for the search text of a row whose columns are reachable as `<prefix>subject` and `<prefix>"to"`. */
export function emailSearchTextSql(prefix = ''): string {
  return `lower(${prefix}subject || E'\\n' || array_to_string(${prefix}"to", E'\\n'))`;
}
