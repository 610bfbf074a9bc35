// A text[] as PostgreSQL's own literal (`{"a","b"}`), for rows that travel as one JSON parameter:
// json_populate_recordset reads a JSON string into a text[] column with array_in, about twice as
// fast as it converts a JSON array (measured in bench/RESULTS.md).

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
