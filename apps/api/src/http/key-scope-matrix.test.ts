import request from 'supertest';
import { generateDkimKeyPair } from '@mailrail/domain/domains/dkim';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

// Every authenticated route of the OpenAPI document, called with
//   (a) a SENDING key: 403 everywhere but /api/v1/emails*;
//   (b) a key bound to one domain of a team that has resources on two domains: the other domain's
//       resources are 404 (like another team's), a write naming the other domain is 403, lists only
//       ever hold the key's own domain; routes with no domain (templates, contact books, contacts,
//       suppressions, custom events) work team-wide;
//   (c) another team's FULL key: 404 for every id, lists empty.
// A route added to the API without a rule below fails the first test.

let api: TestApi;
let sendingKey: { Authorization: string };
let otherTeam: TestTeam;
/** The other team's own keys: its request log holds its own calls, never this team's. */
let otherTeamKeyIds: Set<number>;
let seq = 0;
const keyPair = generateDkimKeyPair();
const HTML = '<p>Hi</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';
const WEBHOOK_URL = 'https://93.184.215.14/hooks/mailrail';
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const SEGMENT_FILTER = { match: 'all', conditions: [{ field: 'email', operator: 'contains', value: 'member' }] };
const tomorrow = () => new Date(Date.now() + 86_400_000);
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  // Each world uploads an import that no worker here finishes: the per-team cap on unfinished
  // imports (import-caps.test.ts) is not what this file tests.
  api = await startTestApi({ SES_IDENTITY_ADAPTER: 'local', CONTACT_IMPORT_MAX_OPEN_PER_TEAM: '1000' });
  sendingKey = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { permission: 'SENDING' })}` };
  otherTeam = await api.newTeam('Other team');
  otherTeamKeyIds = new Set((await api.deps.db.apiKey.findMany({ where: { teamId: otherTeam.teamId } })).map((k) => k.id));
});
afterAll(async () => {
  await api.close();
});

// ------------------------------------------------------------------ a team with two domains

/** What lives on one domain of the team. */
interface DomainSide {
  domain: { id: number; name: string };
  emailId: string;
  campaignId: string;
  webhookId: string;
  /** Analytics figures seeded for this domain only, as the id a list check compares. */
  usage: string;
  reputation: string;
}

interface World {
  /** The domain the bound key is NOT bound to ("domain 1"). */
  other: DomainSide;
  /** The bound key's own domain ("domain 2"). */
  own: DomainSide;
  boundKey: { Authorization: string };
  templateId: string;
  contactBookId: string;
  contactId: string;
  contactEmail: string;
  segmentId: string;
  suppressed: string;
  importId: string;
  /** A custom event of the world's contact. */
  eventId: string;
  /** A draft automation sending from domain 2, and a run of it for the world's contact. */
  automationId: string;
  runId: string;
}

type CampaignState = 'DRAFT' | 'SCHEDULED' | 'PAUSED';

const full = () => api.team.auth;

/** A CSV import's multipart upload (the import routes take no JSON). */
const csvUpload = (req: request.Test) => req.attach('file', Buffer.from(`email\nimported${++seq}@example.org\n`), 'contacts.csv');
const csvPreview = (req: request.Test) => req.set('Content-Type', 'text/csv').send('email,name\na@example.org,A\n');

async function must(method: 'post' | 'get', path: string, body?: unknown) {
  const res = await request(api.app)
    [method](`/api/v1${path}`)
    .set(full())
    .send(body as object);
  if (res.status !== 200) throw new Error(`${method} ${path} → ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
}

async function domainSide(prefix: string, contactBookId: string, campaignState: CampaignState, figures: number): Promise<DomainSide> {
  const n = ++seq;
  const d = await insertDomain(api.deps.db, api.config.SECRET, {
    teamId: api.team.teamId,
    name: `${prefix}${n}.scope.test`,
    region: api.config.AWS_REGION,
    dkimSelector: api.config.DKIM_SELECTOR,
    verified: true,
    keyPair: await keyPair,
  });
  const email = await must('post', '/emails', {
    from: `A <a@${d.name}>`,
    to: 'reader@example.org',
    subject: 'Later',
    text: 'later',
    scheduledAt: tomorrow().toISOString(),
  });
  const campaign = await must('post', '/campaigns', { name: 'C', from: `News <news@${d.name}>`, subject: 'S', contactBookId, html: HTML });
  if (campaignState !== 'DRAFT') {
    await api.deps.db.campaign.update({ where: { id: campaign.id }, data: { status: campaignState, scheduledAt: tomorrow() } });
  }
  const hook = await must('post', '/webhooks', { url: WEBHOOK_URL, events: ['email.sent'], domainIds: [d.id] });
  await api.deps.db.dailyEmailUsage.create({
    data: { teamId: api.team.teamId, domainId: d.id, date: today(), type: 'TRANSACTIONAL', sent: figures },
  });
  await api.deps.db.cumulatedMetrics.create({ data: { teamId: api.team.teamId, domainId: d.id, delivered: figures * 10 } });
  return {
    domain: { id: d.id, name: d.name },
    emailId: email.emailId,
    campaignId: campaign.id,
    webhookId: hook.id,
    usage: `sent:${figures}`,
    reputation: `delivered:${figures * 10}`,
  };
}

/** A fresh world per route, so a route that changes or deletes something cannot affect another. */
async function newWorld(campaignState: CampaignState = 'DRAFT'): Promise<World> {
  const n = ++seq;
  const book = await must('post', '/contactBooks', { name: `Book ${n}` });
  const contactEmail = `member${n}@example.org`;
  const contact = await must('post', `/contactBooks/${book.id}/contacts`, { email: contactEmail });
  const segment = await must('post', `/contactBooks/${book.id}/segments`, { name: `Segment ${n}`, filter: SEGMENT_FILTER });
  const template = await must('post', '/templates', { name: `T${n}`, subject: 'S', html: '<p>x</p>' });
  const suppressed = `blocked${n}@example.org`;
  await must('post', '/suppressions', { email: suppressed });
  const other = await domainSide('one', book.id, campaignState, 7);
  const own = await domainSide('two', book.id, campaignState, 3);
  const boundKey = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: own.domain.id })}` };
  const event = await must('post', '/events', { name: 'world.made', contactId: contact.contactId });
  const automation = await must('post', '/automations', automationBody(own.domain.name));
  const runId = `run${n}`;
  const at = new Date();
  await api.deps.db.automationRun.create({
    data: {
      id: runId,
      teamId: api.team.teamId,
      automationId: automation.id,
      version: 1,
      contactId: contact.contactId,
      entryKey: 'once',
      sourceId: event.id,
      stepId: 'hi',
      dueAt: at,
      enteredAt: at,
      updatedAt: at,
    },
  });
  const upload = await csvUpload(request(api.app).post(`/api/v1/contactBooks/${book.id}/imports`).set(full()));
  if (upload.status !== 202) throw new Error(`import upload → ${upload.status} ${upload.text.slice(0, 300)}`);
  return {
    other,
    own,
    boundKey,
    templateId: template.id,
    contactBookId: book.id,
    contactId: contact.contactId,
    contactEmail,
    segmentId: segment.id,
    suppressed,
    importId: upload.body.id,
    eventId: event.id,
    automationId: automation.id,
    runId,
  };
}

/** The rows of one domain side, to prove a refused call changed nothing. */
async function snapshot(s: DomainSide) {
  const db = api.deps.db;
  return JSON.stringify(
    await Promise.all([
      db.domain.findUnique({ where: { id: s.domain.id } }),
      db.email.findUnique({ where: { id: s.emailId } }),
      db.campaign.findUnique({ where: { id: s.campaignId } }),
      db.webhook.findUnique({ where: { id: s.webhookId } }),
    ]),
  );
}

// ------------------------------------------------------------------ the rule of every route

type Side = 'other' | 'own';
type ListedResource = 'emailId' | 'campaignId' | 'webhookId' | 'domain' | 'usage' | 'reputation';

interface Rule {
  /**
   * What a key bound to domain 2 gets:
   * - `scoped`: acting on domain 1 (its id in the path, or its name/id in the body) is refused,
   *   404 with an id in the path, 403 without; the same call on domain 2 is a 200;
   * - `list`: a 200 that holds domain 2's resource and nothing of another domain;
   * - `team`: no domain applies; a 200 as for a FULL key;
   * - `forbidden`: 403 whatever the input.
   */
  bound: 'scoped' | 'list' | 'team' | 'forbidden';
  /** Another team's FULL key, for routes without an id in the path (those are always 404). */
  crossTeam?: 'empty-list' | 400 | 404 | 'own-team';
  /** For `list`: which resource the answer lists, and how to read it. */
  lists?: ListedResource;
  read?: (body: any) => string[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The state the world's campaigns are in, for the campaign moves. */
  campaign?: CampaignState;
  /** The outcome of a call that works, when it is not 200 (a queued import is a 202). */
  ok?: string;
  /** A body that is not JSON (a multipart upload, a CSV), set on the request. */
  send?: (req: request.Test) => request.Test;
  /** Body and query of the call, for the resources of one side. */
  input?: (w: World, s: DomainSide) => { body?: unknown; query?: Record<string, unknown> };
}

const automationBody = (domainName: string) => ({
  name: 'Scope',
  trigger: { type: 'event', event: 'scope.check' },
  steps: [{ id: 'hi', type: 'sendEmail', from: `A <a@${domainName}>`, subject: 'Hi', html: '<p>Hi</p>' }],
});
const emailBody = (s: DomainSide) => ({ from: `A <a@${s.domain.name}>`, to: 'reader@example.org', subject: 'Now', text: 'now' });
const ids = (rows: { id: string | number }[]) => rows.map((r) => String(r.id));

const RULES: Record<string, Rule> = {
  'POST /api/v1/emails': { bound: 'scoped', crossTeam: 400, input: (_w, s) => ({ body: emailBody(s) }) },
  'GET /api/v1/emails': {
    bound: 'list',
    crossTeam: 'empty-list',
    lists: 'emailId',
    read: (b) => ids(b.data),
    input: (w) => ({ query: { domainId: w.other.domain.id } }),
  },
  'POST /api/v1/emails/batch': { bound: 'scoped', crossTeam: 400, input: (_w, s) => ({ body: [emailBody(s)] }) },
  'GET /api/v1/emails/{emailId}': { bound: 'scoped' },
  'PATCH /api/v1/emails/{emailId}': { bound: 'scoped', input: () => ({ body: { scheduledAt: inAnHour() } }) },
  'POST /api/v1/emails/{emailId}/cancel': { bound: 'scoped' },

  'POST /api/v1/templates': {
    bound: 'team',
    crossTeam: 'own-team',
    input: () => ({ body: { name: 'T', subject: 'S', html: '<p>x</p>' } }),
  },
  'GET /api/v1/templates': { bound: 'team', crossTeam: 'empty-list', read: (b) => ids(b.data) },
  'GET /api/v1/templates/{templateId}': { bound: 'team' },
  'PATCH /api/v1/templates/{templateId}': { bound: 'team', input: () => ({ body: { subject: 'Changed' } }) },
  'DELETE /api/v1/templates/{templateId}': { bound: 'team' },
  'POST /api/v1/templates/{templateId}/preview': { bound: 'team', input: () => ({ body: { variables: { name: 'x' } } }) },

  'POST /api/v1/domains': {
    bound: 'forbidden',
    crossTeam: 'own-team',
    input: () => ({ body: { name: `new${++seq}.scope.test`, region: api.config.AWS_REGION } }),
  },
  'GET /api/v1/domains': { bound: 'list', crossTeam: 'empty-list', lists: 'domain', read: (b) => ids(b) },
  'GET /api/v1/domains/{id}': { bound: 'scoped' },
  'PATCH /api/v1/domains/{id}': { bound: 'scoped', input: () => ({ body: { clickTracking: true } }) },
  'DELETE /api/v1/domains/{id}': { bound: 'scoped' },
  'PUT /api/v1/domains/{id}/verify': { bound: 'scoped' },

  'POST /api/v1/webhooks': {
    bound: 'scoped',
    crossTeam: 400,
    input: (_w, s) => ({ body: { url: WEBHOOK_URL, events: ['email.sent'], domainIds: [s.domain.id] } }),
  },
  'GET /api/v1/webhooks': { bound: 'list', crossTeam: 'empty-list', lists: 'webhookId', read: (b) => ids(b.data) },
  'GET /api/v1/webhooks/{id}': { bound: 'scoped' },
  'PATCH /api/v1/webhooks/{id}': { bound: 'scoped', input: () => ({ body: { description: 'changed' } }) },
  'DELETE /api/v1/webhooks/{id}': { bound: 'scoped' },
  'POST /api/v1/webhooks/{id}/rotate-secret': { bound: 'scoped' },
  'POST /api/v1/webhooks/{id}/test': { bound: 'scoped' },
  'GET /api/v1/webhooks/{id}/deliveries': { bound: 'scoped' },

  'POST /api/v1/contactBooks': { bound: 'team', crossTeam: 'own-team', input: () => ({ body: { name: 'New book' } }) },
  'GET /api/v1/contactBooks': { bound: 'team', crossTeam: 'empty-list', read: (b) => ids(b) },
  'GET /api/v1/contactBooks/{contactBookId}': { bound: 'team' },
  'PATCH /api/v1/contactBooks/{contactBookId}': { bound: 'team', input: () => ({ body: { name: 'Renamed' } }) },
  'DELETE /api/v1/contactBooks/{contactBookId}': { bound: 'team' },
  'POST /api/v1/contactBooks/{contactBookId}/contacts': { bound: 'team', input: () => ({ body: { email: `new${++seq}@example.org` } }) },
  'GET /api/v1/contactBooks/{contactBookId}/contacts': { bound: 'team' },
  'GET /api/v1/contactBooks/{contactBookId}/contacts/export': { bound: 'team', input: (w) => ({ query: { segmentId: w.segmentId } }) },
  'POST /api/v1/contactBooks/{contactBookId}/contacts/bulk': {
    bound: 'team',
    input: () => ({ body: [{ email: `bulk${++seq}@example.org` }] }),
  },
  'DELETE /api/v1/contactBooks/{contactBookId}/contacts/bulk': { bound: 'team', input: (w) => ({ body: { contactIds: [w.contactId] } }) },
  'GET /api/v1/contactBooks/{contactBookId}/contacts/{contactId}': { bound: 'team' },
  'PUT /api/v1/contactBooks/{contactBookId}/contacts/{contactId}': {
    bound: 'team',
    input: (w) => ({ body: { email: w.contactEmail, firstName: 'Put' } }),
  },
  'PATCH /api/v1/contactBooks/{contactBookId}/contacts/{contactId}': { bound: 'team', input: () => ({ body: { firstName: 'Patched' } }) },
  'DELETE /api/v1/contactBooks/{contactBookId}/contacts/{contactId}': { bound: 'team' },
  'POST /api/v1/contactBooks/{contactBookId}/segments': { bound: 'team', input: () => ({ body: { name: 'S', filter: SEGMENT_FILTER } }) },
  'GET /api/v1/contactBooks/{contactBookId}/segments': { bound: 'team' },
  'POST /api/v1/contactBooks/{contactBookId}/segments/preview': { bound: 'team', input: () => ({ body: { filter: SEGMENT_FILTER } }) },
  'GET /api/v1/contactBooks/{contactBookId}/segments/{segmentId}': { bound: 'team' },
  'PATCH /api/v1/contactBooks/{contactBookId}/segments/{segmentId}': { bound: 'team', input: () => ({ body: { name: 'Renamed' } }) },
  'DELETE /api/v1/contactBooks/{contactBookId}/segments/{segmentId}': { bound: 'team' },
  'GET /api/v1/contactBooks/{contactBookId}/segments/{segmentId}/contacts': { bound: 'team' },
  'GET /api/v1/contactBooks/{contactBookId}/properties': { bound: 'team' },
  'PUT /api/v1/contactBooks/{contactBookId}/properties': {
    bound: 'team',
    input: () => ({ body: { properties: [{ name: 'ltv', type: 'number' }] } }),
  },

  'POST /api/v1/contactBooks/{contactBookId}/imports/preview': { bound: 'team', send: csvPreview },
  'POST /api/v1/contactBooks/{contactBookId}/imports': { bound: 'team', ok: '202', send: csvUpload },
  'GET /api/v1/contactBooks/{contactBookId}/imports': { bound: 'team' },
  'GET /api/v1/contactBooks/{contactBookId}/imports/{importId}': { bound: 'team' },
  'GET /api/v1/contactBooks/{contactBookId}/imports/{importId}/rejects': { bound: 'team' },

  'GET /api/v1/suppressions': { bound: 'team', crossTeam: 'empty-list', read: (b) => b.data.map((s: { email: string }) => s.email) },
  'POST /api/v1/suppressions': { bound: 'team', crossTeam: 'own-team', input: () => ({ body: { email: `more${++seq}@example.org` } }) },
  'DELETE /api/v1/suppressions/{email}': { bound: 'team' },

  'GET /api/v1/analytics/email-time-series': {
    bound: 'list',
    crossTeam: 404,
    lists: 'usage',
    read: (b) => [`sent:${b.totalCounts.sent}`],
    input: (w) => ({ query: { domainId: w.other.domain.id } }),
  },
  'GET /api/v1/analytics/reputation-metrics': {
    bound: 'list',
    crossTeam: 404,
    lists: 'reputation',
    read: (b) => [`delivered:${b.delivered}`],
    input: (w) => ({ query: { domainId: w.other.domain.id } }),
  },

  'POST /api/v1/campaigns': {
    bound: 'scoped',
    crossTeam: 400,
    input: (w, s) => ({
      body: { name: 'C', from: `News <news@${s.domain.name}>`, subject: 'S', contactBookId: w.contactBookId, html: HTML },
    }),
  },
  'GET /api/v1/campaigns': { bound: 'list', crossTeam: 'empty-list', lists: 'campaignId', read: (b) => ids(b.campaigns) },
  'GET /api/v1/campaigns/{campaignId}': { bound: 'scoped' },
  'GET /api/v1/campaigns/{campaignId}/recipients': { bound: 'scoped', input: () => ({ query: { outcome: 'pending', limit: 10 } }) },
  'DELETE /api/v1/campaigns/{campaignId}': { bound: 'scoped' },
  'GET /api/v1/campaigns/{campaignId}/check': { bound: 'scoped' },
  'POST /api/v1/campaigns/{campaignId}/schedule': { bound: 'scoped', input: () => ({ body: { scheduledAt: inAnHour() } }) },
  'POST /api/v1/campaigns/{campaignId}/pause': { bound: 'scoped', campaign: 'SCHEDULED' },
  'POST /api/v1/campaigns/{campaignId}/resume': { bound: 'scoped', campaign: 'PAUSED' },
  'PATCH /api/v1/campaigns/{campaignId}': { bound: 'scoped', input: () => ({ body: { name: 'Renamed', ramp: null } }) },
  'POST /api/v1/campaigns/{campaignId}/preview': { bound: 'scoped', input: () => ({ body: { subject: 'Preview {{firstName}}' } }) },
  'POST /api/v1/campaigns/{campaignId}/test': { bound: 'scoped', input: () => ({ body: { to: 'reader@example.org' } }) },

  // An address is not a resource of one team: another team's key gets an empty answer, not a 404.
  'GET /api/v1/addresses/{address}': {
    bound: 'list',
    crossTeam: 'empty-list',
    lists: 'emailId',
    read: (b) => [...b.messages.map((m: { emailId: string }) => m.emailId), ...b.contacts.map((c: { contactId: string }) => c.contactId)],
  },

  // The request log: a bound key sees its own requests (request-log/list-logs.test.ts checks which).
  'GET /api/v1/logs': {
    bound: 'team',
    crossTeam: 'empty-list',
    read: (b) =>
      b.data.filter((e: { apiKey: { id: number } | null }) => !otherTeamKeyIds.has(e.apiKey?.id ?? -1)).map((e: { id: string }) => e.id),
  },

  // Custom events have no domain (like contact books); another team's contact id is a 400 on contactId.
  'POST /api/v1/events': { bound: 'team', crossTeam: 400, input: (w) => ({ body: { name: 'scope.check', contactId: w.contactId } }) },
  'GET /api/v1/events': { bound: 'team', crossTeam: 'empty-list', read: (b) => ids(b.data) },
  'GET /api/v1/events/{eventId}': { bound: 'team' },

  // Automations send from any domain of the team: a key bound to one domain may not manage them.
  'POST /api/v1/automations': { bound: 'forbidden', crossTeam: 'own-team', input: (_w, s) => ({ body: automationBody(s.domain.name) }) },
  'GET /api/v1/automations': { bound: 'forbidden', crossTeam: 'empty-list', read: (b) => ids(b.data) },
  'GET /api/v1/automations/{automationId}': { bound: 'forbidden' },
  'PATCH /api/v1/automations/{automationId}': { bound: 'forbidden', input: () => ({ body: { name: 'Changed' } }) },
  'DELETE /api/v1/automations/{automationId}': { bound: 'forbidden' },
  'POST /api/v1/automations/{automationId}/activate': { bound: 'forbidden' },
  'POST /api/v1/automations/{automationId}/pause': { bound: 'forbidden' },
  'POST /api/v1/automations/{automationId}/resume': { bound: 'forbidden' },
  'GET /api/v1/automations/{automationId}/runs': { bound: 'forbidden' },
  'GET /api/v1/automations/{automationId}/steps': { bound: 'forbidden' },
  'GET /api/v1/automations/{automationId}/runs/{runId}': { bound: 'forbidden' },
  'POST /api/v1/automations/{automationId}/dry-run': { bound: 'forbidden', input: (w) => ({ body: { contactId: w.contactId } }) },
};

// ------------------------------------------------------------------ calling a route

interface Route {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  key: string;
}

let routes: Route[];
beforeAll(async () => {
  const doc = (await request(api.app).get('/api/v1/doc')).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      // Public routes (probes, docs, SNS, subscription pages) take no API key.
      .filter(([, op]) => op.security === undefined || op.security.length > 0)
      .map(([method, op]) => ({ method: method as Route['method'], path, key: `${method.toUpperCase()} ${path}`, op })),
  );
});

function fillPath(path: string, w: World, s: DomainSide): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value: Record<string, string | number> = {
      emailId: s.emailId,
      campaignId: s.campaignId,
      id: path.startsWith('/api/v1/domains') ? s.domain.id : s.webhookId,
      templateId: w.templateId,
      contactBookId: w.contactBookId,
      contactId: w.contactId,
      segmentId: w.segmentId,
      email: w.suppressed,
      importId: w.importId,
      eventId: w.eventId,
      automationId: w.automationId,
      runId: w.runId,
      address: 'reader@example.org',
    };
    if (value[name] === undefined) throw new Error(`no value for {${name}} in ${path}: add it to fillPath`);
    return encodeURIComponent(String(value[name]));
  });
}

async function call(route: Route, auth: { Authorization: string }, w: World, side: Side) {
  const s = w[side];
  const { body, query } = RULES[route.key].input?.(w, s) ?? {};
  let req = request(api.app)
    [route.method](fillPath(route.path, w, s))
    .set(auth);
  if (query) req = req.query(query);
  const send = RULES[route.key].send;
  if (send) return send(req);
  return body === undefined ? req : req.send(body as object);
}

const outcome = (res: request.Response) => `${res.status}${res.status >= 400 ? ` ${res.body?.error?.code}` : ''}`;

/** The ids a list may show a key bound to `domainId`: only that domain's. */
async function allowedFor(resource: ListedResource, w: World): Promise<Set<string>> {
  const db = api.deps.db;
  const d = w.own.domain.id;
  switch (resource) {
    case 'emailId':
      return new Set(ids(await db.email.findMany({ where: { domainId: d }, select: { id: true } })));
    case 'campaignId':
      return new Set(ids(await db.campaign.findMany({ where: { domainId: d }, select: { id: true } })));
    case 'webhookId':
      return new Set(ids(await db.webhook.findMany({ where: { domainIds: { equals: [d] } }, select: { id: true } })));
    case 'domain':
      return new Set([String(d)]);
    case 'usage':
    case 'reputation':
      return new Set([w.own[resource]]);
  }
}

const ownValue = (resource: ListedResource, s: DomainSide) => (resource === 'domain' ? String(s.domain.id) : s[resource]);

// ------------------------------------------------------------------ the matrix

it('has a rule for every authenticated route of the OpenAPI document, and no rule for a route that is gone', () => {
  expect(routes.length).toBeGreaterThan(40);
  expect(routes.map((r) => r.key).filter((k) => !RULES[k])).toEqual([]);
  expect(Object.keys(RULES).filter((k) => !routes.some((r) => r.key === k))).toEqual([]);
});

it('a SENDING key gets 403 on every route but the email routes, which work as for a FULL key', async () => {
  const wrong: string[] = [];
  // Refused calls change nothing, so they share one world; the email routes act, each on a fresh one.
  const shared = await newWorld();
  const before = await snapshot(shared.other);
  for (const route of routes) {
    const isEmailRoute = /^\/api\/v1\/emails(\/|$)/.test(route.path);
    const w = isEmailRoute ? await newWorld() : shared;
    const res = await call(route, sendingKey, w, 'other');
    const expected = isEmailRoute ? (RULES[route.key].ok ?? '200') : '403 FORBIDDEN';
    if (outcome(res) !== expected) wrong.push(`${route.key}: ${outcome(res)}, expected ${expected}`);
  }
  if ((await snapshot(shared.other)) !== before) wrong.push('a refused call changed the shared resources');
  expect(wrong).toEqual([]);
}, 300_000);

it("a key bound to domain 2 cannot see or touch domain 1's resources, and lists only domain 2's", async () => {
  const wrong: string[] = [];
  for (const route of routes) {
    const rule = RULES[route.key];
    const w = await newWorld(rule.campaign);
    const note = (what: string, res: request.Response, expected: string) => {
      if (outcome(res) !== expected)
        wrong.push(`${route.key} ${what}: ${outcome(res)}, expected ${expected} ${res.status >= 400 ? res.body?.error?.message : ''}`);
    };
    const before = await snapshot(w.other);
    if (rule.bound === 'scoped') {
      note("on domain 1's", await call(route, w.boundKey, w, 'other'), route.path.includes('{') ? '404 NOT_FOUND' : '403 FORBIDDEN');
      if ((await snapshot(w.other)) !== before) wrong.push(`${route.key}: domain 1's resources changed`);
      note("on domain 2's", await call(route, w.boundKey, w, 'own'), '200');
    } else if (rule.bound === 'forbidden') {
      note('', await call(route, w.boundKey, w, 'own'), '403 FORBIDDEN');
    } else if (rule.bound === 'team') {
      note('team-wide', await call(route, w.boundKey, w, 'own'), rule.ok ?? '200');
    } else {
      const res = await call(route, w.boundKey, w, 'own');
      note('list', res, '200');
      if (res.status !== 200) continue;
      const listed = rule.read!(res.body);
      const allowed = await allowedFor(rule.lists!, w);
      const foreign = listed.filter((id) => !allowed.has(id));
      if (foreign.length) wrong.push(`${route.key}: lists ${foreign.length} item(s) of other domains`);
      if (!listed.includes(ownValue(rule.lists!, w.own))) wrong.push(`${route.key}: misses domain 2's own item`);
    }
  }
  expect(wrong).toEqual([]);
}, 300_000);

it("another team's FULL key gets 404 for every id of this team and sees none of it in lists", async () => {
  const wrong: string[] = [];
  // Every call here must be refused or see nothing, so one world serves all (the snapshot proves it).
  const w = await newWorld();
  for (const route of routes) {
    const rule = RULES[route.key];
    const expected = route.path.includes('{') && rule.crossTeam !== 'empty-list' ? 404 : rule.crossTeam;
    // A create of a team-wide resource simply creates it in the other team: nothing to compare.
    if (expected === 'own-team') continue;
    const before = await snapshot(w.other);
    const res = await call(route, otherTeam.auth, w, 'other');
    if (expected === undefined) wrong.push(`${route.key}: no crossTeam rule`);
    else if (expected === 'empty-list') {
      if (res.status !== 200 || rule.read!(res.body).length !== 0)
        wrong.push(`${route.key}: ${res.status}, lists ${res.status === 200 ? rule.read!(res.body).length : '?'} item(s)`);
    } else {
      const want = `${expected} ${expected === 404 ? 'NOT_FOUND' : 'BAD_REQUEST'}`;
      if (outcome(res) !== want) wrong.push(`${route.key}: ${outcome(res)}, expected ${want}`);
    }
    if ((await snapshot(w.other)) !== before) wrong.push(`${route.key}: this team's resources changed`);
  }
  expect(wrong).toEqual([]);
}, 300_000);
