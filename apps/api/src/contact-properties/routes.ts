import { z } from 'zod';
import { contactPropertyView } from '@mailrail/domain/audience/properties/contact-properties';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { listContactProperties, replaceContactProperties } from './service';
import { bookParams, replacePropertiesBody } from './schemas';

const registry = z.object({ properties: z.array(contactPropertyView) });

const route = declareRoute<ApiDeps>();
const tag = 'Contact properties';
const path = '/api/v1/contactBooks/:contactBookId/properties';
const rules =
  "A book's typed property registry (mailrail; not in useSend): each property's name, type (`string`, `number`, `boolean`, `date`) and fallback. " +
  'Contacts keep their values as strings in `properties`; the type says how segments compare them (numbers as numbers, dates by calendar day) ' +
  'and how the dashboard shows and edits them. Imports add the columns they map to properties. See docs/audience.md, "Typed properties".';

export const contactPropertyRoutes = [
  route({
    method: 'get',
    path,
    tag,
    summary: "A book's properties, in display order",
    description: rules,
    params: bookParams,
    response: registry,
    handle: async (deps, { auth, params }) => ({ properties: await listContactProperties(deps, auth, params.contactBookId) }),
  }),
  route({
    method: 'put',
    path,
    tag,
    summary: "Replace a book's properties",
    description: `${rules} The list replaces the registry (at most 200; names unique without case, not email, firstName, lastName or subscribed). Contacts' values are not changed.`,
    params: bookParams,
    body: replacePropertiesBody,
    response: registry,
    example: {
      properties: [
        { name: 'company', type: 'string' },
        { name: 'ltv', type: 'number', fallback: '0' },
        { name: 'signup date', type: 'date' },
      ],
    },
    handle: async (deps, { auth, params, body }) => ({
      properties: await replaceContactProperties(deps, auth, params.contactBookId, body.properties),
    }),
  }),
];
