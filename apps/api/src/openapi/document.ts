import { documentHealthRoutes } from '../health/openapi';
import { documentOpsRoutes } from '../ops/openapi';
import { documentRoutes, generateOpenApiDocument } from './registry';
import { documentSesNotificationRoutes } from '../ses-notifications/openapi';
import { documentSubscriptionPageRoutes } from '../contacts/subscription-pages-doc';
import { publicApiCapabilities } from '../public-api';

/**
 * Every route's documentation: /api/v1's capabilities from the list app.ts serves (public-api.ts),
 * and the routes outside /api/v1 from their own documentRoute functions; add those here.
 */
export const documentedCapabilities = [
  documentHealthRoutes,
  documentOpsRoutes,
  ...Object.values(publicApiCapabilities).map((routes) => documentRoutes(routes)),
  documentSubscriptionPageRoutes,
  documentSesNotificationRoutes,
];

export function apiDocumentation(serverUrl: string) {
  return generateOpenApiDocument(documentedCapabilities, serverUrl);
}
