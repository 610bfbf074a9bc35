// The one way the dashboard talks to the API: same-origin JSON calls under /api/dashboard, the
// session cookie sent along, the CSRF token on every state-changing call, and the server's
// `{error:{code,message}}` turned into an ApiError whose message is shown to the user as is.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: { path: (string | number)[]; message: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let csrfToken: string | null = null;

/** Set from the session (sign-in and GET session); sent as X-CSRF-Token on POST, PUT, PATCH and DELETE. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

type Query = Record<string, string | number | boolean | undefined | null | (string | number)[]>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    for (const one of Array.isArray(v) ? v : [v]) params.append(k, String(one));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function errorFrom(res: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON (a proxy's HTML page, an empty body): fall back to the status line
  }
  const err = (body as { error?: { code?: string; message?: string; issues?: ApiError['issues'] } } | null)?.error;
  // The server words `message` for people (a validation error's names its first problem): shown as is.
  if (err?.message) return new ApiError(res.status, err.code ?? 'ERROR', err.message, err.issues ?? []);
  return new ApiError(res.status, 'HTTP_ERROR', `The server answered ${res.status} ${res.statusText || ''}`.trim());
}

export async function apiRequest<T>(
  method: string,
  path: string,
  opts: { query?: Query; body?: unknown; raw?: { body: BodyInit; contentType?: string } } = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  // A raw body (a CSV's text, a multipart form): the browser sets a form's boundary itself.
  if (opts.raw?.contentType) headers['Content-Type'] = opts.raw.contentType;
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(withQuery(`/api/dashboard${path}`, opts.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: opts.raw ? opts.raw.body : opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'The server could not be reached. Check your connection and try again.');
  }
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => apiRequest<T>('GET', path, { query }),
  post: <T>(path: string, body: unknown = {}) => apiRequest<T>('POST', path, { body }),
  put: <T>(path: string, body: unknown = {}) => apiRequest<T>('PUT', path, { body }),
  patch: <T>(path: string, body: unknown = {}) => apiRequest<T>('PATCH', path, { body }),
  delete: <T>(path: string) => apiRequest<T>('DELETE', path),
  /** POST a body as is: text with its type, or FormData (multipart, file uploads). */
  postRaw: <T>(path: string, body: BodyInit, contentType?: string) => apiRequest<T>('POST', path, { raw: { body, contentType } }),
};

/** The URL of a download (CSV export, a report) under the dashboard's routes: a plain link, the cookie authenticates it. */
export function downloadUrl(path: string, query?: Query): string {
  return withQuery(`/api/dashboard${path}`, query);
}
