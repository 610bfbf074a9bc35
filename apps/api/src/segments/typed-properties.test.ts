import request from 'supertest';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { expectBadRequest } from '../testing/expect-bad-request';

// Typed comparisons on properties, evaluated by PostgreSQL: numbers compare as numbers, days as
// calendar days, booleans as true/false; a value that does not read as the type matches nothing
// and fails nothing ("n/a" is not > 100, and the statement still runs).

let api: TestApi;
let book: string;

// Values as the API and the import store them: strings (and a few JSON numbers of older data).
const CONTACTS: Record<string, Record<string, unknown>> = {
  ann: { ltv: '250', signup: '2025-03-01', active: 'true' },
  ben: { ltv: '99.5', signup: '2025-03-01T23:30:00Z', active: 'false' },
  cat: { ltv: 'n/a', signup: 'not a date', active: 'maybe' },
  dan: { ltv: '1e3', signup: '2025-02-30', active: 'TRUE' },
  eli: { ltv: 1000.5, signup: '03/01/2025' },
  fay: { ltv: '', signup: '' },
  gus: {},
  hal: { ltv: '100', signup: '2024-12-31T10:00:00+05:00', active: true },
  ivy: { ltv: '99999999999999999999999999999999999999999999', signup: '9999-12-31' },
};
const nameOf = new Map<string, string>();

beforeAll(async () => {
  api = await startTestApi();
  book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Typed' }).expect(200)).body.id;
  for (const [name, properties] of Object.entries(CONTACTS)) {
    const c = await api.deps.db.contact.create({
      data: { id: `typed-${name}`, contactBookId: book, email: `${name}@example.org`, properties: properties as object },
    });
    nameOf.set(c.id, name);
  }
});
afterAll(async () => {
  await api.close();
});

async function matching(condition: Record<string, unknown>): Promise<string[]> {
  const res = await request(api.app)
    .post(`/api/v1/contactBooks/${book}/segments/preview`)
    .set(api.team.auth)
    .send({ filter: { match: 'all', conditions: [condition] } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.contacts.map((c: { id: string }) => nameOf.get(c.id)).sort();
}

it.each([
  // numbers: as numbers ("99.5" < "100" although "99.5" > "100" as text); "n/a" and "" never match
  [{ field: 'properties.ltv', operator: 'gt', value: 100 }, ['ann', 'dan', 'eli', 'ivy']],
  [{ field: 'properties.ltv', operator: 'lt', value: 100 }, ['ben']],
  [{ field: 'properties.ltv', operator: 'equals', value: 100 }, ['hal']],
  [{ field: 'properties.ltv', operator: 'notEquals', value: 100 }, ['ann', 'ben', 'cat', 'dan', 'eli', 'fay', 'gus', 'ivy']],
  [{ field: 'properties.ltv', operator: 'gt', value: 1e40 }, ['ivy']],
  // dates: by the calendar day written; a date-time counts as its day; unreadable values never match
  [{ field: 'properties.signup', operator: 'gt', value: '2025-02-28' }, ['ann', 'ben', 'dan', 'ivy']],
  [{ field: 'properties.signup', operator: 'lt', value: '2025-03-01' }, ['dan', 'hal']],
  [{ field: 'properties.signup', operator: 'gt', value: '2025-03-01' }, ['ivy']],
  [{ field: 'properties.signup', operator: 'isSet' }, ['ann', 'ben', 'cat', 'dan', 'eli', 'hal', 'ivy']],
  // booleans: the strings true/false in any case and JSON booleans; "maybe" is neither
  [{ field: 'properties.active', operator: 'equals', value: true }, ['ann', 'dan', 'hal']],
  [{ field: 'properties.active', operator: 'equals', value: false }, ['ben']],
  [{ field: 'properties.active', operator: 'notEquals', value: true }, ['ben', 'cat', 'eli', 'fay', 'gus', 'ivy']],
])('%j matches %j', async (condition, expected) => {
  expect(await matching(condition)).toEqual(expected);
});

it('a number and a date comparison in one filter, inside the cost budget, evaluate together', async () => {
  const res = await request(api.app)
    .post(`/api/v1/contactBooks/${book}/segments/preview`)
    .set(api.team.auth)
    .send({
      filter: {
        match: 'all',
        conditions: [
          { field: 'properties.ltv', operator: 'gt', value: 100 },
          { field: 'properties.signup', operator: 'gt', value: '2025-01-01' },
        ],
      },
    })
    .expect(200);
  expect(res.body.contacts.map((c: { id: string }) => nameOf.get(c.id)).sort()).toEqual(['ann', 'dan', 'ivy']);
});

it.each([
  ['a date-time', '2025-03-01T00:00:00Z'],
  ['an impossible month', '2025-13-01'],
  ['a day that is not ISO', '03/01/2025'],
  ['a boolean', true],
])('gt on a property refuses %s as its value (400 at the value)', async (_what, value) => {
  const res = await request(api.app)
    .post(`/api/v1/contactBooks/${book}/segments/preview`)
    .set(api.team.auth)
    .send({ filter: { match: 'all', conditions: [{ field: 'properties.signup', operator: 'gt', value }] } });
  expectBadRequest(res, ['filter', 'conditions', 0, 'value']);
});
