// The answers of the routes the dashboard calls (docs/dashboard-api.md), as aliases of the types
// generated (`npm run api:types`; docs/dashboard.md, "Wire types") from two OpenAPI documents, so
// a change of a schema shows here as a type error:
// - the public API's routes, which the dashboard calls under /teams/{id}/v1 (./generated/openapi.ts);
// - the dashboard-only routes (apps/api/src/dashboard: session, email log, overview, members...),
//   from the dashboard's own document (./generated/dashboard.ts).
import type { components, paths } from './generated/openapi';
import type { components as DashboardComponents, paths as DashboardPaths } from './generated/dashboard';

type Schemas = components['schemas'];
type DashboardSchemas = DashboardComponents['schemas'];
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never;
/** The JSON body of a route's success answer (200, or 202 for work queued), as its document declares it. */
type SuccessOf<Op> = Op extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? Json<R[S]> : never }[keyof R]
  : never;
/** A public route's success answer. */
type Answer<P extends keyof paths, M extends Method> = SuccessOf<paths[P][M]>;
/** A dashboard-only route's success answer. */
type DashboardAnswer<P extends keyof DashboardPaths, M extends Method> = SuccessOf<DashboardPaths[P][M]>;

// ---- The public API's routes (generated) ----

/** GET /v1/events: events (custom or built-in), newest first (docs/custom-events.md). */
export type EventsPage = Answer<'/api/v1/events', 'get'>;
export type EventItem = EventsPage['data'][number];

/** A transactional template (GET /v1/templates): `content` is the visual editor's document when it was written with it. */
export type Template = Schemas['Template'];
/** POST /v1/templates/{id}/preview. */
export type TemplatePreview = Answer<'/api/v1/templates/{templateId}/preview', 'post'>;

/** GET /v1/emails/{id}. */
export type EmailDetail = Answer<'/api/v1/emails/{emailId}', 'get'>;
/** An attachment as GET /v1/emails/{id} lists it (`attachmentList`): never its content. */
export type AttachmentSummary = EmailDetail['attachmentList'][number];
export type EmailEvent = EmailDetail['emailEvents'][number];
/** A recipient of an email and its outcome (GET /v1/emails/{id}, `recipients`). */
export type EmailRecipient = EmailDetail['recipients'][number];

/** GET /v1/addresses/{address}: "Why didn't this arrive?" (docs/deliverability.md). */
export type AddressReport = Answer<'/api/v1/addresses/{address}', 'get'>;

export type Domain = Schemas['Domain'];
export type DnsRecord = Domain['dnsRecords'][number];
export type DnsRecordPurpose = DnsRecord['purpose'];
/** PUT /v1/domains/{id}/verify. */
export type DomainVerifyStarted = Answer<'/api/v1/domains/{id}/verify', 'put'>;

export type Suppression = Schemas['Suppression'];
/** GET /v1/suppressions. */
export type SuppressionPage = Answer<'/api/v1/suppressions', 'get'>;

export type Webhook = Schemas['Webhook'];
/** GET /v1/webhooks. */
export type WebhookList = Answer<'/api/v1/webhooks', 'get'>;
/** POST /v1/webhooks: the webhook with its signing secret, shown once. */
export type CreatedWebhook = Answer<'/api/v1/webhooks', 'post'>;
/** POST /v1/webhooks/{id}/rotate-secret: the webhook with its new secret. */
export type RotatedWebhook = Answer<'/api/v1/webhooks/{id}/rotate-secret', 'post'>;
/** POST /v1/webhooks/{id}/test. */
export type WebhookTestSent = Answer<'/api/v1/webhooks/{id}/test', 'post'>;
/** GET /v1/webhooks/{id}/deliveries. */
export type WebhookDeliveryPage = Answer<'/api/v1/webhooks/{id}/deliveries', 'get'>;

/** GET /v1/analytics/email-time-series. */
export type TimeSeries = Answer<'/api/v1/analytics/email-time-series', 'get'>;
/** Sent, delivered, bounced, complained, opened and clicked emails of a period. */
export type Counts = TimeSeries['totalCounts'];
/** Percentages: delivery, bounces and complaints of sent; opens and clicks of delivered. */
export type OutcomeRates = TimeSeries['totalRates'];

export type ContactBook = Schemas['ContactBook'];
/** A contact in GET .../contacts: with `suppressed`, whether the address is on the team's suppression list. */
export type ContactListItem = Schemas['ContactListItem'];
export type Segment = Schemas['Segment'];
export type SegmentFilter = Schemas['SegmentFilter'];
export type SegmentGroup = Extract<SegmentFilter['conditions'][number], { conditions: unknown }>;
export type SegmentCondition = SegmentGroup['conditions'][number];
export type SegmentOperator = SegmentCondition['operator'];
export type SegmentValue = NonNullable<SegmentCondition['value']>;
/** POST .../segments/preview. */
export type SegmentPreview = Answer<'/api/v1/contactBooks/{contactBookId}/segments/preview', 'post'>;

/** POST .../imports/preview. */
export type ImportPreview = Answer<'/api/v1/contactBooks/{contactBookId}/imports/preview', 'post'>;
export type ContactImport = Schemas['ContactImport'];
/** One entry of a book's typed property registry (GET .../contactBooks/{id}/properties). */
export type ContactProperty = Schemas['ContactProperty'];
export type PropertyType = ContactProperty['type'];
/** GET and PUT .../contactBooks/{id}/properties. */
export type ContactPropertyList = Answer<'/api/v1/contactBooks/{contactBookId}/properties', 'get'>;

export type Campaign = Schemas['Campaign'];
/** GET /v1/campaigns/{id}: the campaign with its recipients' outcomes and its window plan. */
export type CampaignDetail = Schemas['CampaignDetail'];
export type CampaignStatus = Campaign['status'];
/** GET /v1/campaigns. */
export type CampaignList = Answer<'/api/v1/campaigns', 'get'>;
export type CampaignWindowPlan = NonNullable<Schemas['CampaignWindowPlan']>;
/** GET /v1/campaigns/{id}/check: what a send now would do, and what is wrong (errors block, warnings do not). */
export type CampaignPreSendCheck = Schemas['CampaignPreSendCheck'];
/** A page of GET /v1/campaigns/{id}/recipients. */
export type CampaignRecipientsPage = Answer<'/api/v1/campaigns/{campaignId}/recipients', 'get'>;
/** POST /v1/campaigns/{id}/preview. */
export type CampaignPreview = Answer<'/api/v1/campaigns/{campaignId}/preview', 'post'>;
/** POST /v1/campaigns/{id}/test. */
export type CampaignTestSent = Answer<'/api/v1/campaigns/{campaignId}/test', 'post'>;
/** POST /v1/campaigns/{id}/schedule with `dryRun`: when the campaign would start, in the team's time zone. */
export type CampaignScheduleDryRun = Extract<Answer<'/api/v1/campaigns/{campaignId}/schedule', 'post'>, { timeZone: string }>;

/** GET /v1/logs (docs/request-log.md). */
export type RequestLogPage = Answer<'/api/v1/logs', 'get'>;

// ---- The dashboard-only routes (generated from apps/api/src/dashboard's declarations) ----

export type Session = DashboardSchemas['Session'];
export type Role = Session['teams'][number]['role'];

/** GET /teams/{id}/email-log. */
export type EmailLogPage = DashboardAnswer<'/api/dashboard/teams/{teamId}/email-log', 'get'>;

export type ApiKey = DashboardSchemas['ApiKey'];

/** GET /teams/{id}/overview. */
export type Overview = DashboardAnswer<'/api/dashboard/teams/{teamId}/overview', 'get'>;

export type Member = DashboardSchemas['Member'];
export type Invitation = DashboardSchemas['Invitation'];
export type TeamSettings = DashboardSchemas['TeamSettings'];
export type SmtpSettings = DashboardSchemas['SmtpSettings'];

/** POST /teams/{id}/test-email. */
export type TestEmailSent = DashboardAnswer<'/api/dashboard/teams/{teamId}/test-email', 'post'>;

/** POST /teams/{id}/api-keys: the key with its secret, shown once. */
export type CreatedApiKey = DashboardAnswer<'/api/dashboard/teams/{teamId}/api-keys', 'post'>;
/** POST /teams (an operator's). */
export type CreatedTeam = DashboardAnswer<'/api/dashboard/teams', 'post'>;
/** POST /auth/logout-everywhere. */
export type SignedOutEverywhere = DashboardAnswer<'/api/dashboard/auth/logout-everywhere', 'post'>;
/** POST /invitations/lookup: what the accept page shows. */
export type InvitationLookup = DashboardAnswer<'/api/dashboard/invitations/lookup', 'post'>;
/** POST /invitations/accept: signed in (with the session) or not. */
export type InvitationAccepted = DashboardAnswer<'/api/dashboard/invitations/accept', 'post'>;

/** GET /v1/automations/{id}: the current version's definition, its status and run counts (docs/automations.md). */
export type Automation = Answer<'/api/v1/automations/{automationId}', 'get'>;
/** GET /v1/automations/{id}/steps: per-step counts. */
export type AutomationStepCounts = Answer<'/api/v1/automations/{automationId}/steps', 'get'>;
/** GET /v1/automations/{id}/runs. */
export type AutomationRunsPage = Answer<'/api/v1/automations/{automationId}/runs', 'get'>;
/** GET /v1/automations/{id}/runs/{runId}: a run and its log. */
export type AutomationRunLog = Answer<'/api/v1/automations/{automationId}/runs/{runId}', 'get'>;
/** POST /v1/automations/{id}/dry-run. */
export type AutomationDryRun = Answer<'/api/v1/automations/{automationId}/dry-run', 'post'>;
