import type { ZodType, z } from 'zod';
import { ApiError } from '@mailrail/domain/errors/api-error';

/** Parses with zod; a failure is a 400 naming each bad field in `issues`. */
export function parseOrThrow<S extends ZodType>(schema: S, value: unknown, what = 'request body'): z.infer<S> {
  const res = schema.safeParse(value);
  if (res.success) return res.data;
  const issues = res.error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[],
    message: i.message,
  }));
  const first = issues[0];
  const where = first.path.length ? `${first.path.join('.')}: ` : '';
  throw new ApiError('BAD_REQUEST', `Invalid ${what}: ${where}${first.message}`, issues);
}
