import { gzipSync } from 'node:zlib';
import request from 'supertest';
import type { Queue } from 'bullmq';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { bodyLimitBytes } from './accept-lane';
import { sendQueueOf } from './testing';

// POST /api/v1/emails and /batch are answered by the lane ahead of express's router
// (accept-lane.ts); bodies it does not take go the express way. Both must answer alike.

let api: TestApi;
let queue: Queue;
const from = 'Sender <hello@example.com>';
const payload = { to: 'ann@dest.org', from, subject: 'S', text: 'T' };

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT: '1000' });
  queue = sendQueueOf(api);
  await api.addDomain(api.team.teamId, 'example.com');
});

afterAll(async () => {
  await queue.close();
  await api.close();
});

const post = (path: string) => request(api.app).post(path).set(api.team.auth);
const stored = (id: string) => api.deps.db.email.findUnique({ where: { id } });

describe('the accept lane', () => {
  it('stores and enqueues a send, with the request id and rate headers, and no ETag', async () => {
    const res = await post('/api/v1/emails').set('X-Request-Id', 'lane-1').send(payload);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).toBe('lane-1');
    expect(res.headers['x-ratelimit-limit']).toBe('1000');
    expect(res.headers.etag).toBeUndefined();
    expect(await stored(res.body.emailId)).toMatchObject({ teamId: api.team.teamId, subject: 'S', latestStatus: 'QUEUED' });
    expect(await queue.getJob(res.body.emailId)).toBeDefined();
  });

  it('answers a batch with the ids in order', async () => {
    const res = await post('/api/v1/emails/batch').send([payload, { ...payload, subject: 'second' }]);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect((await stored(res.body.data[1].emailId))?.subject).toBe('second');
  });

  it('reads a body with a UTF-8 byte order mark, as express.json does', async () => {
    const res = await post('/api/v1/emails')
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(`\ufeff${JSON.stringify(payload)}`);
    expect(res.status).toBe(200);
  });

  it('refuses malformed JSON, NUL characters and schema errors with the documented 400s', async () => {
    const malformed = await post('/api/v1/emails').set('Content-Type', 'application/json').send('{"to": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: { code: 'BAD_REQUEST', message: 'Malformed JSON in request body' } });

    const nul = await post('/api/v1/emails').send({ ...payload, subject: 'a\u0000b' });
    expect(nul.status).toBe(400);
    expect(nul.body.error.issues).toEqual([{ path: ['subject'], message: expect.stringContaining('NUL') }]);

    const invalid = await post('/api/v1/emails').send({ ...payload, to: 'not an address' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.issues[0].path).toEqual(['to']);

    const notJson = await post('/api/v1/emails').set('Content-Type', 'text/plain').send('hello');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.message).toBe('Content-Type must be application/json');
  });

  it('checks the key before reading the body: no key is a 401, another scope a 403', async () => {
    const none = await request(api.app).post('/api/v1/emails').send(payload);
    expect(none.status).toBe(401);
    const wrong = await request(api.app)
      .post('/api/v1/emails')
      .set('Authorization', 'Bearer us_0000000000_00000000000000000000000000000000')
      .send(payload);
    expect(wrong.status).toBe(403);
  });

  it('sends from another team only with that team’s domains', async () => {
    const other = await api.newTeam('Other');
    const res = await request(api.app).post('/api/v1/emails').set(other.auth).send(payload);
    expect(res.status).toBe(400);
    expect(res.body.error.issues[0].path).toEqual(['from']);
  });

  it('hands gzip bodies, query strings and trailing slashes to the express routes, which answer alike', async () => {
    const gz = await post('/api/v1/emails')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .serialize(() => gzipSync(JSON.stringify(payload)) as unknown as string)
      .send(payload);
    expect(gz.status).toBe(200);
    expect(await stored(gz.body.emailId)).not.toBeNull();
    const slash = await post('/api/v1/emails/').send(payload);
    expect(slash.status).toBe(200);
    const query = await post('/api/v1/emails/batch?x=1').send([payload]);
    expect(query.status).toBe(200);
    expect(query.body.data).toHaveLength(1);
    const malformed = await post('/api/v1/emails/').set('Content-Type', 'application/json').send('{"to": ');
    expect(malformed.body).toEqual({ error: { code: 'BAD_REQUEST', message: 'Malformed JSON in request body' } });
  });

  it('answers a gzip body that is not gzip with a 400 in the error shape, not a 500', async () => {
    for (const path of ['/api/v1/emails', '/api/v1/emails/batch', '/api/v1/domains']) {
      const res = await post(path)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize(() => 'this is not gzip')
        .send(payload);
      expect([path, res.status, res.body]).toEqual([
        path,
        400,
        { error: { code: 'BAD_REQUEST', message: 'Request body is not valid for its Content-Encoding' } },
      ]);
    }
  });

  it('counts lane requests under their route template', async () => {
    await post('/api/v1/emails').send(payload);
    const res = await request(api.app).get('/metrics');
    expect(res.text).toMatch(/mailrail_http_requests_total\{[^}]*route="\/api\/v1\/emails"[^}]*status="200"/);
  });

  it('reads BODY_LIMIT as body-parser does', () => {
    expect(bodyLimitBytes('55mb')).toBe(55 * 1024 * 1024);
    expect(bodyLimitBytes('100kb')).toBe(100 * 1024);
    expect(() => bodyLimitBytes('1gb')).toThrow();
  });
});
