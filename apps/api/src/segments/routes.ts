import { z } from 'zod';
import { segmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { createSegment, deleteSegment, getSegment, listSegments, previewSegmentJson, segmentContactsJson, updateSegment } from './service';
import { contactSchema } from '../contacts/routes';
import { bookParams, createSegmentBody, previewSegmentBody, segmentContactsQuery, segmentParams, updateSegmentBody } from './schemas';

const segment = z
  .object({
    id: z.string(),
    contactBookId: z.string(),
    name: z.string(),
    filter: segmentFilter,
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Segment' });

const counts = {
  count: z.number().int().describe('Contacts of the book matching the filter'),
  subscribedCount: z.number().int().describe('Of those, the subscribed ones: the recipients of a campaign started now'),
};

const FILTER_RULES =
  'Filter: `{match: "all"|"any", conditions: [condition | group]}` (1 to 20 items; a group holds 1 to 20 conditions, no deeper nesting). ' +
  'Fields: email, firstName, lastName (text, case-insensitive), subscribed (equals/notEquals a boolean), createdAt, updatedAt (gt/lt an ISO 8601 date), ' +
  'properties.<name> (the ten comparison operators; see docs/audience.md for how each JSON type compares), ' +
  "emailActivity (the team's email activity by address: deliveredWithin/openedWithin/clickedWithin and notDeliveredWithin/notOpenedWithin/notClickedWithin " +
  "a whole number of days 1..365, counted back from now; openedCampaign/clickedCampaign and notOpenedCampaign/notClickedCampaign the id of one of the team's campaigns, " +
  'another id is a 400 at the value). A bad filter is a 400 naming the field. ' +
  'Cost budget: at most 100 conditions in all, 2,000 characters of contains/startsWith/endsWith values, 2,000 `in` values and 10 emailActivity conditions together; a costlier filter is a 400. ' +
  'A team evaluates at most SEGMENT_CONCURRENCY_PER_TEAM filters at once (one more: 429 with Retry-After). ' +
  'A filter the database cannot evaluate within SEGMENT_QUERY_TIMEOUT_MS (10 s by default; the preview: SEGMENT_PREVIEW_TIMEOUT_MS, 2 s) is stopped: 503 SERVICE_UNAVAILABLE.';

const route = declareRoute<ApiDeps>();
const tag = 'Segments';
const base = '/api/v1/contactBooks/:contactBookId/segments';
const example = {
  name: 'Active Berliners',
  filter: {
    match: 'all',
    conditions: [
      { field: 'subscribed', operator: 'equals', value: true },
      {
        match: 'any',
        conditions: [
          { field: 'properties.city', operator: 'equals', value: 'Berlin' },
          { field: 'email', operator: 'endsWith', value: '.de' },
        ],
      },
    ],
  },
};

export const segmentRoutes = [
  route({
    method: 'post',
    path: base,
    tag,
    summary: 'Create a segment (a saved filter over the book)',
    description: FILTER_RULES,
    params: bookParams,
    body: createSegmentBody,
    response: segment,
    example,
    handle: (deps, { auth, params, body }) => createSegment(deps, auth, params.contactBookId, body),
  }),
  route({
    method: 'get',
    path: base,
    tag,
    summary: 'List the segments of a book, oldest first',
    params: bookParams,
    response: z.array(segment),
    handle: (deps, { auth, params }) => listSegments(deps, auth, params.contactBookId),
  }),
  route({
    method: 'post',
    path: `${base}/preview`,
    tag,
    summary: 'Count and show the first 10 contacts an unsaved filter matches',
    description: FILTER_RULES,
    params: bookParams,
    body: previewSegmentBody,
    response: z.object({ ...counts, contacts: z.array(contactSchema) }),
    example: { filter: example.filter },
    serve: async (deps, { auth, params, body }, _req, res) => {
      res.type('json').send(await previewSegmentJson(deps, auth, params.contactBookId, body.filter));
    },
  }),
  route({
    method: 'get',
    path: `${base}/:segmentId`,
    tag,
    summary: 'Get a segment',
    params: segmentParams,
    response: segment,
    handle: (deps, { auth, params }) => getSegment(deps, auth, params.contactBookId, params.segmentId),
  }),
  route({
    method: 'patch',
    path: `${base}/:segmentId`,
    tag,
    summary: 'Rename a segment or replace its filter',
    description:
      'A new filter is refused with 409 while a campaign that has not fixed its recipients yet (SCHEDULED, or RUNNING before its recipients are written) uses the segment; pause the campaign first. Renaming is always allowed.',
    params: segmentParams,
    body: updateSegmentBody,
    response: segment,
    example: { name: 'Renamed' },
    errors: [404, 409],
    handle: (deps, { auth, params, body }) => updateSegment(deps, auth, params.contactBookId, params.segmentId, body),
  }),
  route({
    method: 'delete',
    path: `${base}/:segmentId`,
    tag,
    summary: 'Delete a segment',
    description:
      'Refused with 409 while a campaign that has not fixed its recipients yet (SCHEDULED, RUNNING, or PAUSED before start) uses it.',
    params: segmentParams,
    response: z.object({ success: z.literal(true) }),
    errors: [404, 409],
    handle: (deps, { auth, params }) => deleteSegment(deps, auth, params.contactBookId, params.segmentId),
  }),
  route({
    method: 'get',
    path: `${base}/:segmentId/contacts`,
    tag,
    summary: "A page of the segment's contacts (ordered by id) with the counts",
    description:
      'A filter the database cannot evaluate within SEGMENT_QUERY_TIMEOUT_MS (10 s by default) is stopped: 503 SERVICE_UNAVAILABLE.',
    params: segmentParams,
    query: segmentContactsQuery,
    response: z.object({ data: z.array(contactSchema), ...counts }),
    serve: async (deps, { auth, params, query }, _req, res) => {
      res.type('json').send(await segmentContactsJson(deps, auth, params.contactBookId, params.segmentId, query));
    },
  }),
];
