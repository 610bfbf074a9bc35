import { documentDomainRoutes } from '../domains/openapi';
import { documentEmailRoutes } from '../emails/openapi';
import { documentHealthRoutes } from '../health/openapi';
import { documentOpsRoutes } from '../ops/openapi';
import { generateOpenApiDocument } from './registry';
import { documentTemplateRoutes } from '../templates/openapi';
import { documentAnalyticsRoutes } from '../analytics/openapi';
import { documentSesNotificationRoutes } from '../ses-notifications/openapi';
import { documentSuppressionRoutes } from '../suppressions/openapi';
import { documentContactBookRoutes } from '../contact-books/openapi';
import { documentContactRoutes } from '../contacts/openapi';
import { documentContactImportRoutes } from '../contact-imports/openapi';
import { documentWebhookRoutes } from '../webhooks/openapi';
import { documentCampaignRoutes } from '../campaigns/openapi';
import { documentSegmentRoutes } from '../segments/openapi';
import { documentAddressRoutes } from '../addresses/openapi';
import { documentRequestLogRoutes } from '../request-log/openapi';

/** Every capability's route documentation; add a capability's documentRoutes function here. */
export const documentedCapabilities = [
  documentHealthRoutes,
  documentOpsRoutes,
  documentEmailRoutes,
  documentTemplateRoutes,
  documentDomainRoutes,
  documentWebhookRoutes,
  documentContactBookRoutes,
  documentContactRoutes,
  documentSegmentRoutes,
  documentContactImportRoutes,
  documentSuppressionRoutes,
  documentAnalyticsRoutes,
  documentSesNotificationRoutes,
  documentCampaignRoutes,
  documentAddressRoutes,
  documentRequestLogRoutes,
];

export function apiDocumentation(serverUrl: string) {
  return generateOpenApiDocument(documentedCapabilities, serverUrl);
}
