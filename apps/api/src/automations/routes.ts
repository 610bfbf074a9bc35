import { z } from 'zod';
import { AutomationRunStatus, AutomationStatus } from '@mailrail/platform/db/generated/enums';
import { reEntry, step, trigger } from '@mailrail/domain/automations/definition';
import type { ApiDeps } from '../deps';
import { declareRoute } from '../http/api-route';
import {
  automationPath,
  createAutomationBody,
  dryRunBody,
  listAutomationsQuery,
  listRunsQuery,
  runPath,
  updateAutomationBody,
} from './schemas';
import {
  createAutomation,
  deleteAutomation,
  dryRun,
  getAutomation,
  getRunLog,
  listAutomations,
  listRuns,
  moveAutomation,
  updateAutomation,
} from './service';
import { stepCounts } from './step-counts';

const TAG = 'Automations';
const ACCESS =
  "mailrail's addition to the useSend API (issue 45; docs/automations.md). FULL keys not bound to a domain and dashboard sessions (both roles); a SENDING key or a key bound to a domain gets 403, another team's id a 404.";

const counts = z
  .object({ ACTIVE: z.number(), COMPLETED: z.number(), EXITED: z.number(), FAILED: z.number() })
  .describe('Runs by status, every version');

const automation = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(AutomationStatus),
  version: z.number().describe('The current version: new runs start on it; running contacts finish on theirs'),
  trigger,
  reEntry,
  goal: z.object({ event: z.string() }).optional(),
  steps: z.array(step),
  runs: counts,
  createdAt: z.string(),
  updatedAt: z.string(),
});

const run = z.object({
  id: z.string(),
  version: z.number(),
  contactId: z.string(),
  contactEmail: z.string().nullable().describe("The contact's address (null once the contact was deleted)"),
  contactBookId: z.string().nullable().describe("The contact's book (null once the contact was deleted)"),
  status: z.enum(AutomationRunStatus),
  stepId: z.string().nullable().describe('The step it runs next (null once finished)'),
  dueAt: z.string().nullable().describe('When that step runs (a wait-for-event step: its timeout)'),
  waitingFor: z.string().nullable().describe('The event a wait-for-event step waits for'),
  exitReason: z.string().nullable().describe('completed, goal, exit, unsubscribed, suppressed, contact-deleted, failed'),
  enteredAt: z.string(),
  finishedAt: z.string().nullable(),
});

const logEntry = z.object({
  seq: z.number(),
  stepId: z.string(),
  type: z.string(),
  outcome: z
    .string()
    .describe('sent, waited, event-arrived, timed-out, then, else, updated, added, removed, webhook, exit, goal, unsubscribed, ...'),
  detail: z.string().describe('Why it went where it went, in words'),
  nextStepId: z.string().nullable(),
  emailId: z.string().nullable(),
  at: z.string(),
});

const pathEntry = z.object({
  stepId: z.string(),
  type: z.string(),
  outcome: z.string(),
  detail: z.string(),
  at: z.string().describe('When it would run, waits taken as elapsed'),
  nextStepId: z.string().nullable(),
});

const example = {
  name: 'Welcome series',
  trigger: { type: 'event', event: 'user.signed_up' },
  reEntry: { mode: 'once' },
  steps: [
    { id: 'welcome', type: 'sendEmail', from: 'Team <hello@example.com>', subject: 'Welcome {{firstName}}', html: '<p>Hi</p>' },
    { id: 'wait', type: 'wait', seconds: 86400 },
    { id: 'tips', type: 'sendEmail', from: 'Team <hello@example.com>', subject: 'Tips', html: '<p>Tips</p>' },
  ],
};

const route = declareRoute<ApiDeps>();
const base = '/api/v1/automations';

const moves = {
  activate: 'Activate a draft: events stored from now on enroll contacts',
  pause: 'Pause: no enrollment, and no step runs until resumed',
  resume: 'Resume a paused automation: runs go on from where they were; events stored while paused do not enroll',
} as const;

const moveRoute = (move: keyof typeof moves) =>
  route({
    method: 'post',
    path: `${base}/:automationId/${move}`,
    tag: TAG,
    summary: moves[move],
    description: `A move from another status is a 400. ${ACCESS}`,
    params: automationPath,
    response: automation,
    errors: [403, 404],
    handle: (deps, { auth, params }) => moveAutomation(deps, auth, params.automationId, move),
  });

export const automationRoutes = [
  route({
    method: 'post',
    path: base,
    tag: TAG,
    summary: 'Create an automation (a draft)',
    description:
      "A trigger (an event name with a filter; a contact added to a book; a contact entering a segment, `segmentEntered`, the members at activation not enrolling; or a date property of the contacts of a book plus `offsetDays`, at `time` in the contact's zone, `date`), a re-entry rule, an optional goal event and steps (sendEmail, wait, waitForEvent, branch, updateContact, addToBook, removeFromBook, webhook, exit). " +
      'Each step goes to `next` (default: the following step; null ends the run); branches have `then`/`else`, waitForEvent `timeoutNext`. Loops are refused. ' +
      "Conditions (branches, event filters) test contact or event properties, segment membership (`source: segment`) or email activity (`source: emailActivity`, the segment filter's operators); at most 10 segment and activity conditions per automation, within the segment cost budget together. " +
      `Books, templates, sender domains, segments and campaigns must be the team's (400 naming each). ${ACCESS}`,
    body: createAutomationBody,
    example,
    response: z.object({ id: z.string() }),
    errors: [403],
    handle: (deps, { auth, body }) => createAutomation(deps, auth, body),
  }),
  route({
    method: 'get',
    path: base,
    tag: TAG,
    summary: "The team's automations",
    description: `Newest first. ${ACCESS}`,
    query: listAutomationsQuery,
    response: z.object({ data: z.array(automation) }),
    errors: [403],
    handle: (deps, { auth, query }) => listAutomations(deps, auth, query),
  }),
  route({
    method: 'get',
    path: `${base}/:automationId`,
    tag: TAG,
    summary: 'One automation',
    description: ACCESS,
    params: automationPath,
    response: automation,
    errors: [403, 404],
    handle: (deps, { auth, params }) => getAutomation(deps, auth, params.automationId),
  }),
  route({
    method: 'patch',
    path: `${base}/:automationId`,
    tag: TAG,
    summary: 'Edit an automation',
    description: `A change of trigger, reEntry, goal or steps stores a new version (the fields given replace the current version's): new runs start on it, running contacts finish on the one they started on. A name alone changes no version. ${ACCESS}`,
    params: automationPath,
    body: updateAutomationBody,
    example: { name: 'Welcome series (v2)' },
    response: automation,
    errors: [403, 404],
    handle: (deps, { auth, params, body }) => updateAutomation(deps, auth, params.automationId, body),
  }),
  route({
    method: 'delete',
    path: `${base}/:automationId`,
    tag: TAG,
    summary: 'Delete an automation and its runs',
    description: ACCESS,
    params: automationPath,
    response: z.object({ id: z.string(), deleted: z.boolean() }),
    errors: [403, 404],
    handle: (deps, { auth, params }) => deleteAutomation(deps, auth, params.automationId),
  }),
  moveRoute('activate'),
  moveRoute('pause'),
  moveRoute('resume'),
  route({
    method: 'get',
    path: `${base}/:automationId/steps`,
    tag: TAG,
    summary: 'How many runs entered, wait in, carried out and exited at each step',
    description:
      'Counted over every run and version, by step id: `waiting` are runs in the step now (held by a wait or a wait-for-event step, or due to run it), `done` carried it out and went on (or completed there), `exited` ended there without going on (exit step, goal, unsubscribed, suppressed, contact deleted, failed); `entered` is their sum. ' +
      `Heavy work: it runs under the team's segment budget (429, or 503 when the server's is full) and stops after SEGMENT_QUERY_TIMEOUT_MS (503). ${ACCESS}`,
    params: automationPath,
    response: z.object({
      data: z.array(z.object({ stepId: z.string(), entered: z.number(), waiting: z.number(), done: z.number(), exited: z.number() })),
    }),
    errors: [403, 404, 429, 503],
    handle: (deps, { auth, params }) => stepCounts(deps, auth, params.automationId),
  }),
  route({
    method: 'get',
    path: `${base}/:automationId/runs`,
    tag: TAG,
    summary: "The automation's runs",
    description: `Newest entry first, paged by cursor. ${ACCESS}`,
    params: automationPath,
    query: listRunsQuery,
    response: z.object({ data: z.array(run), nextCursor: z.string().nullable() }),
    errors: [403, 404],
    handle: (deps, { auth, params, query }) => listRuns(deps, auth, params.automationId, query),
  }),
  route({
    method: 'get',
    path: `${base}/:automationId/runs/:runId`,
    tag: TAG,
    summary: 'A run and its log: each step executed, its outcome and why it went where it went',
    description: ACCESS,
    params: runPath,
    response: z.object({ run, log: z.array(logEntry) }),
    errors: [403, 404],
    handle: (deps, { auth, params }) => getRunLog(deps, auth, params.automationId, params.runId),
  }),
  route({
    method: 'post',
    path: `${base}/:automationId/dry-run`,
    tag: TAG,
    summary: 'The path one contact would take, writing nothing',
    description: `Decided by the runtime's own rules on the contact as stored now: waits taken as elapsed, a wait for an event sees it arrive when named in \`arrivingEvents\`, and times out otherwise. ${ACCESS}`,
    params: automationPath,
    body: dryRunBody,
    example: { contactId: 'contact_id', arrivingEvents: ['order.paid'] },
    response: z.object({ enters: z.boolean(), why: z.string(), path: z.array(pathEntry) }),
    errors: [403, 404],
    handle: (deps, { auth, params, body }) => dryRun(deps, auth, params.automationId, body),
  }),
];
