import { DomainStatus } from '@mailrail/platform/db/generated/enums';
import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import { createDomainBody, domainIdParam, updateDomainBody } from './domain-service';

const domainStatus = z.enum(DomainStatus);

const dnsRecord = z.object({
  type: z.enum(['MX', 'TXT']),
  name: z.string(),
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
    createdAt: z.string(),
    updatedAt: z.string(),
    dnsRecords: z.array(dnsRecord),
  })
  .meta({ id: 'Domain' });

export function documentDomainRoutes(r: DocRegistry) {
  const tag = 'Domains';
  const params = domainIdParam;
  documentRoute(r, {
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
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/domains',
    tag,
    summary: 'List domains, newest first',
    response: z.array(domainResponse),
  });
  documentRoute(r, { method: 'get', path: '/api/v1/domains/:id', tag, summary: 'Get a domain', params, response: domainResponse });
  documentRoute(r, {
    method: 'put',
    path: '/api/v1/domains/:id/verify',
    tag,
    summary: 'Start verification now',
    params,
    response: z.object({ message: z.string() }),
  });
  documentRoute(r, {
    method: 'patch',
    path: '/api/v1/domains/:id',
    tag,
    summary: 'Set click and open tracking',
    params,
    body: updateDomainBody,
    example: { clickTracking: true },
    response: domainResponse,
  });
  documentRoute(r, {
    method: 'delete',
    path: '/api/v1/domains/:id',
    tag,
    summary: 'Delete a domain (and its SES identity unless another team still uses it)',
    params,
    response: z.object({ id: z.number().int(), success: z.literal(true), message: z.string() }),
  });
}
