/** Links in emails carry their token in the fragment (`#token=…`), so it never reaches a server log. */
export function tokenFromHash(): string | null {
  return new URLSearchParams(window.location.hash.slice(1)).get('token');
}
