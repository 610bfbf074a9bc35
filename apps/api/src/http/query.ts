import { z } from 'zod';
import { MAX_QUERY_VALUE_LENGTH } from './limits';
import { INT4_MAX, isSupportedInstant, UNSUPPORTED_DATE_MESSAGE } from '@mailrail/domain/date-range';

/** A query-string integer in [min, max]; max defaults to PostgreSQL's int4 (ids, pages, filters). */
export const intString = (min: number, max: number = INT4_MAX) =>
  z
    .string()
    .max(MAX_QUERY_VALUE_LENGTH)
    .regex(/^\d{1,10}$/, 'must be a positive integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** `page` (default 1) and `limit` (default 50, at most 100). */
export const pageQuery = {
  page: intString(1).default(1),
  limit: intString(1, 100).default(50),
};

/** An ISO 8601 date-time with an offset, as a Date within the supported years (1970..9999). */
export const isoDateTime = (message = 'must be an ISO 8601 date-time') =>
  z.iso
    .datetime({ offset: true, message })
    .transform((s) => new Date(s))
    .refine(isSupportedInstant, UNSUPPORTED_DATE_MESSAGE);
