import { addressRoutes } from './addresses/routes';
import { analyticsRoutes } from './analytics/routes';
import { automationRoutes } from './automations/routes';
import { campaignRoutes } from './campaigns/routes';
import { contactBookRoutes } from './contact-books/routes';
import { contactImportRoutes } from './contact-imports/routes';
import { contactPropertyRoutes } from './contact-properties/routes';
import { contactRoutes } from './contacts/routes';
import { domainRoutes } from './domains/routes';
import { emailRoutes } from './emails/routes';
import { eventRoutes } from './events/routes';
import { bindRoutes, type ApiRoute, type BoundRoutes } from './http/api-route';
import { requestLogRoutes } from './request-log/routes';
import { segmentRoutes } from './segments/routes';
import { suppressionRoutes } from './suppressions/routes';
import { templateRoutes } from './templates/routes';
import { webhookRoutes } from './webhooks/routes';

/**
 * /api/v1's capabilities and their declared routes, listed once: app.ts serves them (bindPublicApi,
 * which needs each one's handler dependencies) and openapi/document.ts documents them.
 */
export const publicApiCapabilities = {
  emails: emailRoutes,
  templates: templateRoutes,
  domains: domainRoutes,
  webhooks: webhookRoutes,
  contactBooks: contactBookRoutes,
  contacts: contactRoutes,
  segments: segmentRoutes,
  contactImports: contactImportRoutes,
  contactProperties: contactPropertyRoutes,
  suppressions: suppressionRoutes,
  analytics: analyticsRoutes,
  campaigns: campaignRoutes,
  addresses: addressRoutes,
  requestLog: requestLogRoutes,
  events: eventRoutes,
  automations: automationRoutes,
};

type Capabilities = typeof publicApiCapabilities;
type HandlerDeps<R> = R extends readonly ApiRoute<infer D>[] ? D : never;
/** What each capability's handlers take: a capability added above without its dependencies here is a type error. */
export type PublicApiDeps = { [K in keyof Capabilities]: HandlerDeps<Capabilities[K]> };

/** Every capability's routes with their dependencies, for routerOf. */
export function bindPublicApi(deps: PublicApiDeps): BoundRoutes[] {
  return (Object.keys(publicApiCapabilities) as (keyof Capabilities)[]).map((name) =>
    bindRoutes(publicApiCapabilities[name] as readonly ApiRoute<unknown>[], deps[name]),
  );
}
