import { DomainStatus } from '@mailrail/platform/db/generated/enums';
import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import {
  addDomain,
  deleteDomain,
  getDomain,
  listDomains,
  startDomainVerification,
  updateDomain,
  type DomainDeps,
  createDomainBody,
  domainIdParam,
  updateDomainBody,
} from './domain-service';

const domainStatus = z.enum(DomainStatus);

const dnsRecord = z.object({
  type: z.enum(['MX', 'TXT']),
  name: z.string().describe('Relative to `zone`, as most DNS providers ask for it'),
  fullName: z.string().describe('The whole name: `name` + "." + `zone` (mailrail; not in useSend)'),
  zone: z.string().describe('The registrable domain `name` is relative to: the zone the record goes in (mailrail; not in useSend)'),
  purpose: z
    .enum(['MAIL_FROM', 'SPF', 'DKIM', 'DMARC', 'OWNERSHIP'])
    .describe(
      "What the record is for (mailrail; not in useSend): MAIL_FROM (the MX of the bounce domain), SPF (of the MAIL FROM domain), DKIM (the signing key), DMARC (recommended policy), OWNERSHIP (a team sharing another team's SES identity proves it controls the name)",
    ),
  value: z.string(),
  valueChunks: z.array(z.string()).optional(),
  ttl: z.string(),
  priority: z.string().optional(),
  status: domainStatus,
  recommended: z.boolean().optional(),
});

export const domainResponse = z
  .object({
    id: z.number().int(),
    name: z.string(),
    teamId: z.number().int(),
    status: domainStatus,
    region: z.string(),
    clickTracking: z.boolean(),
    openTracking: z.boolean(),
    publicKey: z.string(),
    dkimSelector: z.string(),
    dkimStatus: z.string().nullable(),
    spfDetails: z.string().nullable(),
    dmarcAdded: z.boolean(),
    isVerifying: z.boolean(),
    errorMessage: z.string().nullable(),
    subdomain: z.string().nullable(),
    verificationError: z.string().nullable(),
    lastCheckedTime: z.string().nullable(),
    hasEverVerified: z.boolean(),
    nextCheckAt: z.string().nullable().describe('When the server checks the domain next (mailrail; not in useSend)'),
    propagationEndsAt: z
      .string()
      .nullable()
      .describe(
        'Until when records not found (yet) keep a domain that never verified PENDING, with what was found in errorMessage and verificationError DNS_RECORDS_PROPAGATING; FAILED only after it (created + 72 hours). Null once verified (mailrail; not in useSend)',
      ),
    createdAt: z.string(),
    updatedAt: z.string(),
    dnsRecords: z.array(dnsRecord),
  })
  .meta({ id: 'Domain' });

const route = declareRoute<DomainDeps>();
const tag = 'Domains';
const params = domainIdParam;

export const domainRoutes = [
  route({
    method: 'post',
    path: '/api/v1/domains',
    tag,
    summary: 'Register a sending domain',
    description:
      'Names are unique per team (409 NOT_UNIQUE only for a name the team already has). Teams adding the same name in the same region share one SES identity and its DKIM key; a team that did not create the identity gets an extra `_mailrail-verification` TXT record (`mailrail-verification=<token>`) in `dnsRecords` and is verified only once that record is published. The SES identity is deleted with the last domain row using it.',
    body: createDomainBody,
    example: { name: 'example.com', region: 'us-east-1' },
    response: domainResponse,
    errors: [400, 401, 403, 409, 429, 503],
    handle: (d, { auth, body }) => addDomain(d, auth, body),
  }),
  route({
    method: 'get',
    path: '/api/v1/domains',
    tag,
    summary: 'List domains, newest first',
    response: z.array(domainResponse),
    handle: (d, { auth }) => listDomains(d, auth),
  }),
  route({
    method: 'get',
    path: '/api/v1/domains/:id',
    tag,
    summary: 'Get a domain',
    params,
    response: domainResponse,
    handle: (d, { auth, params }) => getDomain(d, auth, params.id),
  }),
  route({
    method: 'put',
    path: '/api/v1/domains/:id/verify',
    tag,
    summary: 'Start verification now',
    params,
    response: z.object({ message: z.string() }),
    handle: (d, { auth, params }) => startDomainVerification(d, auth, params.id),
  }),
  route({
    method: 'patch',
    path: '/api/v1/domains/:id',
    tag,
    summary: 'Set click and open tracking',
    params,
    body: updateDomainBody,
    example: { clickTracking: true },
    response: domainResponse,
    handle: (d, { auth, params, body }) => updateDomain(d, auth, params.id, body),
  }),
  route({
    method: 'delete',
    path: '/api/v1/domains/:id',
    tag,
    summary: 'Delete a domain (and its SES identity unless another team still uses it)',
    params,
    response: z.object({ id: z.number().int(), success: z.literal(true), message: z.string() }),
    handle: (d, { auth, params }) => deleteDomain(d, auth, params.id),
  }),
];
