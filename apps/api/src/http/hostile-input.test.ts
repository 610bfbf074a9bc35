import request from 'supertest';
import { startTestApi, type TestApi } from '../testing/api-harness';

// Hostile input on every documented route: a NUL, a lone surrogate, malformed percent-encoding,
// an integer beyond int4 and a date before year 1970 must all be a 400 in the documented shape,
// never a 500 (PostgreSQL refuses NUL in text, int4 overflows, year 0000 is no timestamptz).

let api: TestApi;
let operations: { method: string; path: string; pathParams: string[]; queryParams: string[]; hasBody: boolean }[];

beforeAll(async () => {
  api = await startTestApi();
  const doc = (await request(api.app).get('/api/v1/doc')).body as {
    paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: unknown }>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method,
      path,
      pathParams: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
      queryParams: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      hasBody: op.requestBody !== undefined,
    })),
  );
});
afterAll(async () => {
  await api.close();
});

/** The route's path with each parameter replaced by `value(name)` (already URL-encoded). */
const fill = (path: string, value: (name: string) => string) => path.replace(/\{(\w+)\}/g, (_m, name: string) => value(name));

function send(method: string, url: string, body?: unknown) {
  const req = (request(api.app) as unknown as Record<string, (u: string) => request.Test>)[method](url).set(api.team.auth);
  return body === undefined ? req : req.send(body as object);
}

function expect400(res: request.Response, what: string) {
  if (res.status !== 400) throw new Error(`${what}: expected 400, got ${res.status} ${res.text.slice(0, 300)}`);
  expect(res.body.error.code).toBe('BAD_REQUEST');
  expect(typeof res.body.error.message).toBe('string');
}

const BAD_SEGMENTS = ['abc%00def', '%00', '%ED%A0%80', '%ff%fe', '%E0%A4%A', '%', 'a%2'];

describe('hostile path parameters', () => {
  it('answers 400 on every route with a path parameter (NUL, lone surrogate, malformed percent-encoding)', async () => {
    const withParams = operations.filter((o) => o.pathParams.length);
    expect(withParams.length).toBeGreaterThan(20);
    for (const op of withParams) {
      for (const target of op.pathParams) {
        for (const bad of BAD_SEGMENTS) {
          const url = fill(op.path, (name) => (name === target ? bad : 'abc123'));
          expect400(await send(op.method, url, op.hasBody ? {} : undefined), `${op.method.toUpperCase()} ${url}`);
        }
      }
    }
  });

  it('answers an out-of-range integer id with a 4xx, never a 500', async () => {
    for (const op of operations.filter((o) => o.pathParams.length)) {
      const url = fill(op.path, () => '3000000000');
      const res = await send(op.method, url, op.hasBody ? {} : undefined);
      expect([`${op.method} ${url}`, res.status < 500]).toEqual([`${op.method} ${url}`, true]);
    }
    // A well-formed domain id that cannot exist is a 404 (domains.test.ts), never a 500.
  });
});

describe('hostile query strings', () => {
  it('answers 400 on every route when a query value holds a NUL', async () => {
    for (const op of operations) {
      const base = fill(op.path, () => 'abc123');
      for (const name of [...op.queryParams, 'probe']) {
        expect400(
          await send(op.method, `${base}?${name}=a%00b`, op.hasBody ? {} : undefined),
          `${op.method.toUpperCase()} ${base}?${name}=a%00b`,
        );
        expect400(
          await send(op.method, `${base}?${name}[x]=%00`, op.hasBody ? {} : undefined),
          `${op.method.toUpperCase()} ${base}?${name}[x]=%00`,
        );
        // A query value that does not decode (an encoded lone surrogate, a cut sequence) is kept
        // as its literal text by the query parser: harmless, but never a 500.
        for (const bad of ['%ED%A0%80x', 'a%F0%9F', '%zz']) {
          const url = `${base}?${name}=${bad}`;
          const res = await send(op.method, url, op.hasBody ? {} : undefined);
          expect([url, res.status < 500]).toEqual([url, true]);
        }
      }
    }
  });

  it('bounds integer and date filters', async () => {
    for (const url of [
      '/api/v1/emails?domainId=3000000000',
      '/api/v1/emails?domainId=1&domainId=2147483648',
      '/api/v1/emails?page=2147483648',
      '/api/v1/emails?startDate=0000-01-01T00:00:00Z',
      '/api/v1/emails?endDate=10000-01-01T00:00:00Z',
      '/api/v1/emails?startDate=1969-12-31T23:59:59Z',
      '/api/v1/analytics/email-time-series?domainId=3000000000',
      '/api/v1/analytics/reputation-metrics?domainId=99999999999999999999',
      '/api/v1/templates?page=99999999999',
      '/api/v1/campaigns?page=3000000000',
      '/api/v1/suppressions?page=3000000000',
      '/api/v1/contactBooks/abc123/contacts?page=3000000000',
    ]) {
      expect400(await send('get', url), url);
    }
    expect((await send('get', '/api/v1/emails?startDate=1970-01-01T00:00:00Z&endDate=9999-12-31T23:59:59Z')).status).toBe(200);
  });
});

describe('hostile JSON bodies', () => {
  it('answers 400 on every route with a body when any string (or key) holds a NUL or a lone surrogate', async () => {
    const withBody = operations.filter((o) => o.hasBody && o.path.startsWith('/api/v1'));
    expect(withBody.length).toBeGreaterThan(10);
    for (const op of withBody) {
      const url = fill(op.path, () => 'abc123');
      for (const body of [
        { name: 'a\u0000b' },
        { name: 'ok', nested: [{ deep: '\ud800' }] },
        { ['k\u0000']: 'v' },
        [{ to: 'a@b.c', subject: '\udc00 lone low' }],
      ]) {
        expect400(await send(op.method, url, body), `${op.method.toUpperCase()} ${url} ${JSON.stringify(body)}`);
      }
    }
  });

  // A path copy per level once made this walk quadratic (130 s). How long it takes now is
  // bench/hostile-input/run.ts's figure; here, that it reaches the bottom and names the whole path.
  it('walks a 100,000-deep JSON body to the string at its bottom', async () => {
    const depth = 100_000;
    const res = await request(api.app)
      .post('/api/v1/contactBooks')
      .set(api.team.auth)
      .set('Content-Type', 'application/json')
      .send('['.repeat(depth) + '"\\u0000"' + ']'.repeat(depth));
    expect(res.status).toBe(400);
    expect(res.body.error.issues[0].path).toHaveLength(depth);
  });

  it('bounds integers in bodies to int4', async () => {
    const res = await send('post', '/api/v1/webhooks', { url: 'https://93.184.215.14/hook', domainIds: [3000000000] });
    expect400(res, 'POST /api/v1/webhooks domainIds=[3000000000]');
    expect(res.body.error.issues[0].path).toEqual(['domainIds', 0]);
  });

  it('keeps well-formed surrogate pairs (emoji) and plain text', async () => {
    const res = await send('post', '/api/v1/contactBooks', { name: 'Fans 🎉', emoji: '🎉' });
    expect(res.status).toBe(200);
  });

  it('bounds body dates to years 1970..9999', async () => {
    await api.addDomain(api.team.teamId, 'hostile.example.com');
    const book = await send('post', '/api/v1/contactBooks', { name: 'Dates' });
    const campaign = await send('post', '/api/v1/campaigns', {
      name: 'Dates',
      from: 'news@hostile.example.com',
      subject: 'Hi',
      contactBookId: book.body.id,
      html: '<a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>',
    });
    expect(campaign.status).toBe(200);
    for (const scheduledAt of ['0000-01-01T00:00:00Z', '1969-12-31T00:00:00Z', '+010000-01-01T00:00:00Z']) {
      expect400(await send('patch', '/api/v1/emails/abc123', { scheduledAt }), `PATCH scheduledAt=${scheduledAt}`);
      const res = await send('post', '/api/v1/emails', {
        to: 'a@example.com',
        from: 'x@example.com',
        subject: 's',
        text: 't',
        scheduledAt,
      });
      expect400(res, `POST /emails scheduledAt=${scheduledAt}`);
      expect400(
        await send('post', `/api/v1/campaigns/${campaign.body.id}/schedule`, { scheduledAt }),
        `schedule scheduledAt=${scheduledAt}`,
      );
    }
  });
});
