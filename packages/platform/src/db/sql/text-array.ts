// A text[] as PostgreSQL's own literal (`{"a","b"}`), for rows that travel as one JSON parameter:
// json_populate_recordset reads a JSON string into a text[] column with array_in, which is cheaper
// than the conversion of a JSON array it would do otherwise.

/** `{"a","b"}`: every element quoted, so commas, braces, spaces, NULL and "" stay text. */
export function textArrayLiteral(values: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i) out += ',';
    // Inside quotes only `"` and `\` are special; each is escaped with a backslash.
    out += `"${values[i].replace(/["\\]/g, '\\$&')}"`;
  }
  return `${out}}`;
}
