import { z } from 'zod';
import { segmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from '../http/limits';
import { intString } from '../http/query';

export const MAX_SEGMENT_PAGE = 1000;

const name = z.string().trim().min(1).max(MAX_NAME_LENGTH);

export const createSegmentBody = z.object({ name, filter: segmentFilter });
export type CreateSegmentBody = z.infer<typeof createSegmentBody>;

export const updateSegmentBody = z.object({ name: name.optional(), filter: segmentFilter.optional() });
export type UpdateSegmentBody = z.infer<typeof updateSegmentBody>;

export const previewSegmentBody = z.object({ filter: segmentFilter });

const id = z.string().min(1).max(MAX_ID_LENGTH);
export const bookParams = z.object({ contactBookId: id });
export const segmentParams = z.object({ contactBookId: id, segmentId: id });

export const segmentContactsQuery = z.object({
  page: intString(1).default(1),
  limit: intString(1, MAX_SEGMENT_PAGE).default(50),
});
export type SegmentContactsQuery = z.infer<typeof segmentContactsQuery>;
