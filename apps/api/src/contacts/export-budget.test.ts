import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { seedContacts } from '@mailrail/testing/contact-seed';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

// An export never holds a database connection while its client reads, and its clients are
// budgeted: EXPORT_CONCURRENCY_PER_TEAM per team, EXPORT_CONCURRENCY in all, and one that takes
// nothing for EXPORT_IDLE_TIMEOUT_MS is cut off. The clients here are raw sockets that take the
// first bytes of the answer and then stop reading, as the review's did; each book is far larger
// than what the kernel's socket buffers absorb, so its export cannot finish while they stall.

const PER_TEAM = 2;
const GLOBAL = 4;
const HEAVY_POOL = 2;
// Rows of ~2.5 KB: 8,000 of them are ~20 MB of CSV per export.
const BOOK_CONTACTS = 8_000;

let api: TestApi;
let server: Server;
let port: number;
const openSockets: Socket[] = [];

beforeAll(async () => {
  api = await startTestApi({
    EXPORT_CONCURRENCY_PER_TEAM: String(PER_TEAM),
    EXPORT_CONCURRENCY: String(GLOBAL),
    HEAVY_DB_POOL_SIZE: String(HEAVY_POOL),
    DATABASE_POOL_SIZE: '5',
  });
  server = createServer(api.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
}, 60_000);
// A test that fails midway must not leave its stalled exports holding the next test's places.
afterEach(() => openSockets.splice(0).forEach((s) => s.destroy()));
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await api?.close();
});

async function bigBook(team: TestTeam): Promise<string> {
  const book = (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'Big' }).expect(200)).body.id as string;
  await seedContacts((text, params) => api.deps.sql.execute(text, params), book, BOOK_CONTACTS);
  await api.deps.sql.execute(
    `UPDATE "Contact" SET properties = properties || jsonb_build_object('bio', repeat('b', 2500)) WHERE "contactBookId" = $1`,
    [book],
  );
  return book;
}

interface StalledClient {
  socket: Socket;
  /** The status code of the answer, once its first bytes came. */
  status: Promise<number>;
  closed: Promise<void>;
}

/** Requests the export, takes the first bytes of the answer, then never reads again. */
function stalledExport(team: TestTeam, book: string, toPort = port): StalledClient {
  const socket = connect(toPort, '127.0.0.1');
  openSockets.push(socket);
  socket.write(
    `GET /api/v1/contactBooks/${book}/contacts/export HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${team.auth.Authorization}\r\n\r\n`,
  );
  const status = new Promise<number>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0));
    });
    socket.once('error', reject);
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  return { socket, status, closed };
}

/**
 * The client sessions of this test's database inside a transaction, this query's own aside, each
 * as "pid@start of its transaction". Only client backends: autovacuum's workers (busy after the
 * books' bulk writes) show a transaction too, and are not the API's connections.
 */
async function transactionsOpen(): Promise<Set<string>> {
  const rows = await api.deps.sql.query<{ id: string }>(
    `SELECT pid::text || '@' || xact_start::text AS id FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`,
  );
  return new Set(rows.map((r) => r.id));
}

const settledCount = async (clients: StalledClient[], atLeast: number) => {
  const statuses: number[] = [];
  clients.forEach((c) => void c.status.then((s) => statuses.push(s)));
  await waitFor(async () => statuses.length >= atLeast, { timeoutMs: 30_000, what: `${atLeast} export answers` });
  return statuses;
};

it('slow non-reading exports of several teams, more than the budget and the heavy pool, leave the pool free for another team', async () => {
  const teams = [api.team, await api.newTeam('A2'), await api.newTeam('A3')];
  const books = await Promise.all(teams.map(bigBook));
  const bystander = await api.newTeam('Bystander');
  await api.addDomain(bystander.teamId, 'bystander.example');
  const bystanderBook = (await request(api.app).post('/api/v1/contactBooks').set(bystander.auth).send({ name: 'Small' }).expect(200)).body
    .id;

  const clients = teams.flatMap((team, i) => Array.from({ length: PER_TEAM }, () => stalledExport(team, books[i])));
  expect(clients.length).toBeGreaterThan(GLOBAL);
  expect(clients.length).toBeGreaterThan(HEAVY_POOL);

  await settledCount(clients, GLOBAL);
  // No connection is held while the exports stall: a transaction open now and still open after
  // another team's requests would be one an export keeps while its client does not read (the old
  // export held one of the request pool each, in a transaction, for as long as its client stalled).
  // Other transactions (the request log's writes, the bystander's own) come and go meanwhile.
  const openAtStart = await transactionsOpen();
  const statuses = await Promise.all(clients.map((c) => c.status));
  // GLOBAL exports run (and stall); the others are told the server is busy.
  expect(statuses.filter((s) => s === 200)).toHaveLength(GLOBAL);
  expect(statuses.filter((s) => s === 503)).toHaveLength(clients.length - GLOBAL);

  // While they stall, another team reads, sends, evaluates a segment on the heavy pool (which the
  // stalled exports would leave no connection of, did they keep one while their client stalls),
  // and the instance is ready.
  for (let i = 0; i < 3; i++) {
    await request(api.app).get('/api/v1/contactBooks').set(bystander.auth).expect(200);
    await request(api.app)
      .post(`/api/v1/contactBooks/${bystanderBook}/segments/preview`)
      .set(bystander.auth)
      .send({ filter: { match: 'all', conditions: [{ field: 'email', operator: 'contains', value: 'example' }] } })
      .expect(200);
    await request(api.app)
      .post('/api/v1/emails')
      .set(bystander.auth)
      .send({ from: 'a@bystander.example', to: `x${i}@example.com`, subject: 'Hi', text: 'Hi' })
      .expect(200);
    await request(api.app).get('/ready').expect(200);
  }
  const openAtEnd = await transactionsOpen();
  expect([...openAtStart].filter((id) => openAtEnd.has(id))).toEqual([]);

  // The stalled exports are still open (none could finish); when their clients leave, their places are freed.
  const running = clients.filter((_, i) => statuses[i] === 200);
  expect(running.every((c) => !c.socket.destroyed && c.socket.readableEnded === false)).toBe(true);
  running.forEach((c) => c.socket.destroy());
  await waitFor(
    async () =>
      (await request(api.app).get(`/api/v1/contactBooks/${books[0]}/contacts/export`).set(teams[0].auth).buffer(true)).status === 200,
    { timeoutMs: 30_000, what: 'an export place freed' },
  );
}, 120_000);

it("a team's export past its own limit gets 429 in the error shape, and another team's export still starts", async () => {
  const team = await api.newTeam('Exporter');
  const other = await api.newTeam('Other exporter');
  const [book, otherBook] = await Promise.all([bigBook(team), bigBook(other)]);
  const held = Array.from({ length: PER_TEAM }, () => stalledExport(team, book));
  expect(await Promise.all(held.map((c) => c.status))).toEqual(held.map(() => 200));

  const refused = await request(api.app).get(`/api/v1/contactBooks/${book}/contacts/export`).set(team.auth);
  expect(refused.status).toBe(429);
  expect(refused.headers['retry-after']).toBeDefined();
  expect(refused.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.stringContaining(`${PER_TEAM} export`) } });

  const started = stalledExport(other, otherBook);
  expect(await started.status).toBe(200);
  [...held, started].forEach((c) => c.socket.destroy());
}, 120_000);

it('a client that takes nothing for EXPORT_IDLE_TIMEOUT_MS is cut off and its place freed', async () => {
  // A second API process on the same database and Redis prefix, whose idle timeout is tiny.
  const quick = await startTestApi(
    { EXPORT_IDLE_TIMEOUT_MS: '200', EXPORT_CONCURRENCY_PER_TEAM: '1' },
    { databaseUrl: api.config.DATABASE_URL, redisPrefix: api.config.REDIS_PREFIX },
  );
  const quickServer = createServer(quick.app);
  await new Promise<void>((resolve) => quickServer.listen(0, '127.0.0.1', resolve));
  const quickPort = (quickServer.address() as AddressInfo).port;
  try {
    const team = await api.newTeam('Idle');
    const book = await bigBook(team);
    const idle = stalledExport(team, book, quickPort);
    expect(await idle.status).toBe(200);
    // Its one place is freed once the server cuts it off: the team's next export starts (and is whole).
    const next = await waitFor(
      async () => {
        const res = await request(quick.app).get(`/api/v1/contactBooks/${book}/contacts/export`).set(team.auth).buffer(true);
        return res.status === 200 && res.text;
      },
      { timeoutMs: 30_000, what: 'the idle export place freed' },
    );
    // The idle client, reading again, finds its connection closed before the end of the file.
    let received = 0;
    idle.socket.on('data', (chunk: Buffer) => (received += chunk.length));
    idle.socket.resume();
    await idle.closed;
    expect(received).toBeLessThan(Buffer.byteLength(next));
  } finally {
    await new Promise((resolve) => quickServer.close(resolve));
    await quick.close();
  }
}, 120_000);
