import { z } from 'zod';

/** A query-string integer in [min, max]. */
export const intString = (min: number, max?: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a positive integer')
    .transform(Number)
    .pipe(max === undefined ? z.number().int().min(min) : z.number().int().min(min).max(max));

/** `page` (default 1) and `limit` (default 50, at most 100). */
export const pageQuery = {
  page: intString(1).default(1),
  limit: intString(1, 100).default(50),
};
