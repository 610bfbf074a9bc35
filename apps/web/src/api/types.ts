// The answers of the routes the dashboard calls (docs/dashboard-api.md; the /v1 ones are the public
// API's, documented at /api/v1/doc). Only what the pages read is typed here.
import type { Explanation } from '@mailrail/domain/deliverability/explanations';
import type {
  ApiPermission,
  DomainStatus,
  EmailSource,
  EmailStatus,
  SuppressionReason,
  WebhookDeliveryStatus,
  WebhookStatus,
} from '@mailrail/platform/db/generated/enums';

import type { CampaignRecipientCounts, CampaignRecipientOutcome } from '@mailrail/domain/campaigns/recipient-outcomes';

export type Role = 'ADMIN' | 'MEMBER';

export interface Session {
  user: { id: number; email: string; hasPassword: boolean };
  teams: { id: number; name: string; role: Role }[];
  csrfToken: string;
  expiresAt: string;
}

export interface EmailLogItem {
  id: string;
  from: string;
  to: string[];
  subject: string;
  latestStatus: EmailStatus;
  source: EmailSource;
  domainId: number | null;
  campaignId: string | null;
  scheduledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface EmailLogPage {
  data: EmailLogItem[];
  nextCursor: string | null;
  /** The planner's estimate of the emails matching (first page only): shown as "about". */
  estimatedTotal?: number;
}

/** An attachment as GET /v1/emails/{id} lists it (`attachmentList`): never its content. */
export interface AttachmentSummary {
  filename: string;
  contentType: string;
  size: number;
}

export interface EmailEvent {
  emailId: string;
  status: EmailStatus;
  createdAt: string;
  data: unknown;
}

export interface EmailDetail extends Omit<EmailLogItem, 'campaignId'> {
  attachmentList: AttachmentSummary[];
  html: string | null;
  text: string | null;
  replyTo: string[];
  cc: string[];
  bcc: string[];
  emailEvents: EmailEvent[];
  recipients: EmailRecipient[];
}

/** A recipient of an email and its outcome (GET /v1/emails/{id}, `recipients`). */
export interface EmailRecipient {
  email: string;
  type: 'to' | 'cc' | 'bcc';
  status: EmailStatus;
  reason: string | null;
  statusAt: string | null;
  explanation: Explanation | null;
}

/** GET /v1/addresses/{address}: "Why didn't this arrive?" (docs/deliverability.md). */
export interface AddressReport {
  address: string;
  suppression: {
    reason: SuppressionReason;
    createdAt: string;
    updatedAt: string;
    causedByEmailId: string | null;
    explanation: Explanation;
    cause: Explanation | null;
  } | null;
  contacts: {
    contactBookId: string;
    contactBookName: string;
    contactId: string;
    subscribed: boolean;
    unsubscribeReason: 'UNSUBSCRIBED' | 'BOUNCED' | 'COMPLAINED' | null;
    state: 'SUBSCRIBED' | 'UNSUBSCRIBED' | 'PENDING_CONFIRMATION';
    createdAt: string;
    updatedAt: string;
  }[];
  messages: {
    emailId: string;
    subject: string;
    from: string;
    createdAt: string;
    campaign: { id: string; name: string } | null;
    type: 'to' | 'cc' | 'bcc';
    status: EmailStatus;
    statusAt: string | null;
    explanation: Explanation | null;
  }[];
  nextCursor: string | null;
}

export interface DnsRecord {
  type: 'MX' | 'TXT';
  name: string;
  value: string;
  valueChunks?: string[];
  ttl: string;
  priority?: string;
  status: DomainStatus;
  recommended?: boolean;
}

export interface Domain {
  id: number;
  name: string;
  status: DomainStatus;
  region: string;
  clickTracking: boolean;
  openTracking: boolean;
  isVerifying: boolean;
  errorMessage: string | null;
  verificationError: string | null;
  lastCheckedTime: string | null;
  createdAt: string;
  dnsRecords: DnsRecord[];
}

export interface ApiKey {
  id: number;
  name: string;
  permission: ApiPermission;
  domainId: number | null;
  partialToken: string;
  lastUsed: string | null;
  createdAt: string;
}

export interface Suppression {
  id: string;
  email: string;
  reason: SuppressionReason;
  source: string | null;
  createdAt: string;
}

export interface Webhook {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  domainIds: number[];
  status: WebhookStatus;
  enabled: boolean;
  consecutiveFailures: number;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  createdAt: string;
}

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  attempt: number;
  responseStatus: number | null;
  durationMs: number | null;
  responseText: string | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Counts {
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
}

/** Percentages: delivery, bounces and complaints of sent; opens and clicks of delivered. */
export interface OutcomeRates {
  deliveryRate: number;
  openRate: number;
  clickRate: number;
  bounceRate: number;
  complaintRate: number;
}

/** Reputation over the recent window SES judges (hard bounces and complaints of sent). */
export interface ReputationWindow {
  days: number;
  from: string;
  to: string;
  sent: number;
  hardBounced: number;
  complained: number;
  bounceRate: number;
  complaintRate: number;
}

export interface Overview {
  today: Counts;
  todayRates: OutcomeRates;
  last30Days: Counts;
  last30DaysRates: OutcomeRates;
  series: (Counts & { date: string })[];
  reputation: {
    delivered: number;
    hardBounced: number;
    complained: number;
    bounceRate: number;
    complaintRate: number;
    window: ReputationWindow;
  };
  thresholds: { bounceRate: { review: number; pause: number }; complaintRate: { review: number; pause: number } };
}

export interface Member {
  userId: number;
  email: string;
  role: Role;
  joinedAt: string;
}

export interface Invitation {
  id: number;
  email: string;
  role: Role;
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
  expired: boolean;
}

export interface TeamSettings {
  id: number;
  name: string;
  apiRateLimit: number | null;
  effectiveRateLimit: number;
  defaultRateLimit: number;
  role: Role;
}

export interface Paged<T> {
  data: T[];
  count: number;
}

// ---- Audience and campaigns (issue 20; contract in /api/v1/doc) ----

export interface ContactBook {
  id: string;
  name: string;
  emoji: string;
  properties: Record<string, string>;
  variables: string[];
  doubleOptInEnabled: boolean;
  doubleOptInFrom: string | null;
  doubleOptInSubject: string | null;
  createdAt: string;
  updatedAt: string;
  _count: { contacts: number };
  /** The subscribed contacts: the audience of a campaign to the whole book. */
  subscribedCount: number;
}

export interface Contact {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  subscribed: boolean;
  /** In lists only: the address is on the team's suppression list. */
  suppressed?: boolean;
  properties: Record<string, string>;
  contactBookId: string;
  createdAt: string;
  updatedAt: string;
}

export type SegmentField = 'email' | 'firstName' | 'lastName' | 'subscribed' | 'createdAt' | 'updatedAt' | `properties.${string}`;
export type SegmentOperator = 'equals' | 'notEquals' | 'contains' | 'startsWith' | 'endsWith' | 'gt' | 'lt' | 'isSet' | 'isNotSet' | 'in';
export type SegmentValue = string | number | boolean | (string | number)[];

export interface SegmentCondition {
  field: SegmentField;
  operator: SegmentOperator;
  value?: SegmentValue;
}
export interface SegmentGroup {
  match: 'all' | 'any';
  conditions: SegmentCondition[];
}
export interface SegmentFilter {
  match: 'all' | 'any';
  conditions: (SegmentCondition | SegmentGroup)[];
}

export interface Segment {
  id: string;
  contactBookId: string;
  name: string;
  filter: SegmentFilter;
  createdAt: string;
  updatedAt: string;
}

export interface SegmentPreview {
  count: number;
  subscribedCount: number;
  contacts: Contact[];
}

export type ImportTarget = 'email' | 'firstName' | 'lastName' | 'subscribed' | 'ignore' | `properties.${string}`;

export interface ImportPreview {
  headers: string[];
  mapping: Record<string, ImportTarget>;
  sample: string[][];
}

export interface ContactImport {
  id: string;
  contactBookId: string;
  fileName: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  onExisting: 'skip' | 'update';
  rowsRead: number;
  created: number;
  updated: number;
  skipped: number;
  rejected: number;
  suppressed: number;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export type CampaignStatus = 'DRAFT' | 'SCHEDULED' | 'RUNNING' | 'PAUSED' | 'SENT';

export interface CampaignRamp {
  start: number;
  factor: number;
}

export interface CampaignWindow {
  number: number;
  size: number;
  startedAt: string;
  nextAt: string;
}

export interface CampaignListItem {
  id: string;
  name: string;
  from: string;
  subject: string;
  status: CampaignStatus;
  scheduledAt: string | null;
  total: number;
  sent: number;
  delivered: number;
  unsubscribed: number;
  createdAt: string;
  updatedAt: string;
}

export interface Campaign extends CampaignListItem {
  previewText: string | null;
  contactBookId: string | null;
  /** null when the campaign targets the whole book. */
  segmentId: string | null;
  html: string | null;
  content: string | null;
  batchSize: number;
  batchWindowMinutes: number;
  ramp: CampaignRamp | null;
  window: CampaignWindow | null;
  opened: number;
  clicked: number;
  bounced: number;
  hardBounced: number;
  complained: number;
  rates: OutcomeRates;
  replyTo: string[];
  /** GET /v1/campaigns/{id} only; null until the audience is fixed. */
  recipientOutcomes?: CampaignRecipientCounts | null;
}

/** A page of GET /v1/campaigns/{id}/recipients. */
export interface CampaignRecipientsPage {
  recipients: {
    contactId: string;
    email: string;
    outcome: CampaignRecipientOutcome;
    reason: string | null;
    emailId: string | null;
  }[];
  nextAfter: string | null;
}

export interface CampaignPreview {
  subject: string;
  html: string;
  text: string;
  contact: { id: string; email: string } | null;
}

export interface TimeSeries {
  result: (Counts & { date: string })[];
  totalCounts: Counts;
  totalRates: OutcomeRates;
}

/** An entry of GET /api/v1/logs (docs/request-log.md). */
export interface RequestLogEntry {
  id: string;
  createdAt: string;
  source: 'api' | 'smtp';
  method: string;
  path: string;
  status: number;
  error: { code: string; message: string } | null;
  durationMs: number;
  apiKey: { id: number; name: string | null } | null;
  requestBody: unknown;
}

export interface RequestLogPage {
  data: RequestLogEntry[];
  nextCursor: string | null;
}
