import express from 'express';
import request from 'supertest';
import { createApp } from '../app';
import { startTestApi } from './api-harness';
import { checkedAgainstDocument, responseContract, type ObservedResponse, type ResponseContract } from './response-contract';

let contract: ResponseContract;
beforeAll(async () => {
  contract = await responseContract();
});

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const answer = (r: Partial<ObservedResponse>): ObservedResponse => ({
  method: 'GET',
  url: '/',
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: json({}),
  ...r,
});
const listItem = {
  id: 'e1',
  to: ['a@x.org'],
  from: 'b@x.org',
  subject: 's',
  html: null,
  text: 't',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  latestStatus: 'QUEUED',
  scheduledAt: null,
  domainId: null,
  replyTo: [],
  cc: [],
  bcc: [],
};

describe('the response contract', () => {
  it('accepts a response the document describes (the streamed email list included)', () => {
    expect(contract.problems(answer({ url: '/api/v1/emails?limit=1', body: json({ data: [listItem], count: 1 }) }))).toEqual([]);
    expect(
      contract.problems(
        answer({ url: '/api/v1/emails/e1', status: 404, body: json({ error: { code: 'NOT_FOUND', message: 'Email not found' } }) }),
      ),
    ).toEqual([]);
  });

  it('refuses a field the document does not name, a wrong type, a missing field and an unknown enum value', () => {
    const list = (item: object) => contract.problems(answer({ url: '/api/v1/emails', body: json({ data: [item], count: 1 }) }));
    expect(list({ ...listItem, secret: 'x' })).toEqual([expect.stringMatching(/additional properties \(secret\)/)]);
    expect(list({ ...listItem, domainId: '3' })).toEqual([expect.stringMatching(/\/data\/0\/domainId must be integer/)]);
    const { subject: _omitted, ...noSubject } = listItem;
    expect(list(noSubject)).toEqual([expect.stringMatching(/must have required property 'subject'/)]);
    expect(list({ ...listItem, latestStatus: 'LOST' })).toEqual([
      expect.stringMatching(/latestStatus must be equal to one of the allowed values/),
    ]);
  });

  it('refuses a status the route does not list, an error not in the error shape, and an undocumented content type', () => {
    expect(
      contract.problems(answer({ url: '/api/v1/emails', status: 418, body: json({ error: { code: 'BAD_REQUEST', message: 'x' } }) })),
    ).toEqual([expect.stringMatching(/status 418 is not documented for GET \/api\/v1\/emails/)]);
    expect(contract.problems(answer({ url: '/api/v1/emails', status: 400, body: json({ message: 'bad' }) }))).toEqual([
      expect.stringMatching(/must have required property 'error'/),
    ]);
    expect(contract.problems(answer({ url: '/api/v1/emails', contentType: 'text/html', body: Buffer.from('<p>') }))).toEqual([
      expect.stringMatching(/content type text\/html is not documented/),
    ]);
  });

  it('lets an unknown route answer only with an error in the error shape', () => {
    expect(
      contract.problems(
        answer({ url: '/nowhere', status: 404, body: json({ error: { code: 'NOT_FOUND', message: 'Route GET /nowhere not found' } }) }),
      ),
    ).toEqual([]);
    expect(contract.problems(answer({ url: '/nowhere', status: 200, body: json({}) }))).toEqual([
      expect.stringMatching(/no GET route for this path/),
    ]);
    expect(contract.problems(answer({ url: '/nowhere', status: 404, body: json({ missing: true }) }))).toHaveLength(1);
  });

  it("holds the dashboard's own routes to their document: a missing field, an extra one, an undeclared route", () => {
    const member = { userId: 1, email: 'a@x.org', role: 'ADMIN', joinedAt: '2026-01-01T00:00:00.000Z' };
    const members = (data: object[]) => contract.problems(answer({ url: '/api/dashboard/teams/7/members', body: json({ data }) }));
    expect(members([member])).toEqual([]);
    expect(members([{ ...member, passwordHash: 'x' }])).toEqual([expect.stringMatching(/additional properties \(passwordHash\)/)]);
    const { joinedAt: _omitted, ...noJoinedAt } = member;
    expect(members([noJoinedAt])).toEqual([expect.stringMatching(/must have required property 'joinedAt'/)]);
    expect(members([{ ...member, joinedAt: 'yesterday' }])).toEqual([expect.stringMatching(/joinedAt must match format "date-time"/)]);
    expect(contract.problems(answer({ url: '/api/dashboard/teams/7/nowhere' }))).toEqual([
      expect.stringMatching(/the dashboard's document has no GET route/),
    ]);
    // Its errors: the one error shape, whatever the status.
    expect(
      contract.problems(
        answer({ url: '/api/dashboard/session', status: 401, body: json({ error: { code: 'UNAUTHORIZED', message: 'x' } }) }),
      ),
    ).toEqual([]);
    expect(contract.problems(answer({ url: '/api/dashboard/session', status: 401, body: json({ message: 'x' }) }))).toHaveLength(1);
  });

  it('sees a body written in pieces, as the hand-streamed list writes it', async () => {
    const app = express();
    app.get('/api/v1/emails', (_req, res) => {
      res.status(200).type('json');
      res.write('{"data":[');
      res.write(Buffer.from(JSON.stringify({ ...listItem, extra: 1 })));
      res.end('],"count":1}');
    });
    const problems: string[] = [];
    const res = await request(checkedAgainstDocument(app, contract, (p) => problems.push(p))).get('/api/v1/emails');
    expect(res.status).toBe(200);
    expect(problems).toEqual([expect.stringMatching(/additional properties \(extra\)/)]);
  });
});

describe('answers the document once had wrong', () => {
  it('GET /ready answers 503 in its own shape (not the error shape) when Redis is down', async () => {
    const api = await startTestApi();
    const redisDown = Object.create(api.deps.redis, { ping: { value: () => Promise.reject(new Error('connection refused')) } });
    const { app, close } = createApp({ ...api.deps, redis: redisDown });
    try {
      const problems: string[] = [];
      const res = await request(checkedAgainstDocument(app, contract, (p) => problems.push(p))).get('/ready');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'unavailable', postgres: 'ok', redis: 'unavailable' });
      expect(problems).toEqual([]);
    } finally {
      close();
      await api.close();
    }
  });
});
