// Small string helpers written as loops: the regex forms (`/\/+$/`, `/\/\/[^@]*@/`) are searched
// from every start position, which is quadratic on a long run of the repeated character (16,000
// slashes in a request path: about a second of blocked event loop).

/** `text` without the run of `char` (one UTF-16 code unit) at its end. */
export function trimTrailing(text: string, char: string): string {
  const code = char.charCodeAt(0);
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === code) end--;
  return text.slice(0, end);
}

/** A connection URL with its `user:password@` replaced by `***@`, for logs and errors. */
export function maskUrlCredentials(url: string): string {
  const scheme = url.indexOf('//');
  if (scheme === -1) return url;
  const at = url.indexOf('@', scheme + 2);
  return at === -1 ? url : `${url.slice(0, scheme + 2)}***${url.slice(at)}`;
}
