import { documentDomainRoutes } from '../domains/openapi';
import { documentEmailRoutes } from '../emails/openapi';
import { documentHealthRoutes } from '../health/openapi';
import { documentOpsRoutes } from '../ops/openapi';
import { generateOpenApiDocument } from './registry';
import { documentContactBookRoutes } from '../contact-books/openapi';
import { documentContactRoutes } from '../contacts/openapi';
import { documentWebhookRoutes } from '../webhooks/openapi';
import { documentCampaignRoutes } from '../campaigns/openapi';

/** Every capability's route documentation; add a capability's documentRoutes function here. */
export const documentedCapabilities = [documentHealthRoutes, documentOpsRoutes, documentEmailRoutes, documentDomainRoutes, documentWebhookRoutes, documentContactBookRoutes, documentContactRoutes, documentCampaignRoutes];

export function apiDocumentation(serverUrl: string) {
  return generateOpenApiDocument(documentedCapabilities, serverUrl);
}
