import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { newId } from '@mailrail/platform/ids';
import { type Logger } from '@mailrail/platform/log/logger';
import type { AuthContext } from '../http/auth';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { DEFAULT_LIST_STREAM_LIMITS, listEmailsQuery, streamEmailList, type ListStreamLimits } from './list-emails';

// GET /api/v1/emails writes each body from PostgreSQL in bounded pieces instead of holding the
// whole page (up to 100 emails of up to 40 MB each) in memory.

/**
 * A count that has stopped growing: polled until it stays the same over five polls of 100 ms. A
 * stalled machine can make it read too early, which lets a count through but never fails a
 * correct stream.
 */
async function settled(count: () => number): Promise<number> {
  let last = -1;
  for (let still = 0; still < 5;) {
    await new Promise((r) => setTimeout(r, 100));
    still = count() === last ? still + 1 : 0;
    last = count();
  }
  return last;
}

let api: TestApi;
let server: http.Server;
let base: string;
beforeAll(async () => {
  api = await startTestApi();
  server = http.createServer(api.app).listen(0);
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await api.close();
});

const MB = 1 << 20;

async function insertEmail(
  team: TestTeam,
  fields: { html?: string | null; text?: string | null; subject?: string; createdAt?: Date; scheduledAt?: Date },
) {
  const id = newId();
  await api.deps.db.email.create({
    data: {
      id,
      teamId: team.teamId,
      from: 'me@a.org',
      to: ['x@dest.org', 'y@dest.org'],
      replyTo: ['r@a.org'],
      cc: [],
      bcc: ['b@dest.org'],
      subject: fields.subject ?? 'S',
      html: fields.html ?? null,
      text: fields.text ?? null,
      createdAt: fields.createdAt,
      scheduledAt: fields.scheduledAt,
    },
  });
  return id;
}

/** A body of `bytes` characters that SES could be sent: varied text, so PostgreSQL cannot compress it to nothing. */
function bigHtml(bytes: number, seed: number): string {
  const words: string[] = [];
  let x = seed;
  let length = 0;
  while (length < bytes) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const w = `<p class="c${x % 997}">${x.toString(36)}</p>\n`;
    words.push(w);
    length += w.length;
  }
  return words.join('').slice(0, bytes);
}

describe('GET /api/v1/emails streams the page', () => {
  it('answers byte for byte what res.json gave for the same page (small and chunked bodies)', async () => {
    const team = await api.newTeam('Shape');
    const tricky = 'quote " backslash \\ newline \n tab \t control \u0001 é 日本 emoji 😀 </script> \u2028';
    await insertEmail(team, { html: `<b>${tricky}</b>`, text: tricky, subject: 'small', createdAt: new Date('2026-01-01T00:00:00Z') });
    await insertEmail(team, {
      html: null,
      text: null,
      subject: 'empty',
      createdAt: new Date('2026-01-02T00:00:00Z'),
      scheduledAt: new Date('2026-02-01T00:00:00Z'),
    });
    await insertEmail(team, { html: tricky.repeat(50), text: '', subject: 'long', createdAt: new Date('2026-01-03T00:00:00Z') });
    await insertEmail(team, { html: '', text: 'x'.repeat(300), subject: 'text only', createdAt: new Date('2026-01-03T00:00:00Z') });

    // What the previous implementation answered: res.json({ data, count }) over this findMany.
    const previous = async (skip: number, take: number) => {
      const where = { teamId: team.teamId };
      const data = await api.deps.db.email.findMany({
        where,
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        skip,
        take,
        select: {
          id: true,
          to: true,
          from: true,
          subject: true,
          html: true,
          text: true,
          createdAt: true,
          updatedAt: true,
          latestStatus: true,
          scheduledAt: true,
          domainId: true,
          replyTo: true,
          cc: true,
          bcc: true,
        },
      });
      return JSON.stringify({ data, count: await api.deps.db.email.count({ where }) });
    };

    // Through the route with the default limits (every body small: read in one batch).
    const res = await fetch(`${base}/api/v1/emails`, { headers: team.auth });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await res.text();
    expect(body).toBe(await previous(0, 50));
    expect(JSON.parse(body).count).toBe(4);
    expect(await fetch(`${base}/api/v1/emails?page=2&limit=3`, { headers: team.auth }).then((r) => r.text())).toBe(await previous(3, 3));
    expect(await fetch(`${base}/api/v1/emails?page=9`, { headers: team.auth }).then((r) => r.text())).toBe('{"data":[],"count":4}');

    // With tiny limits every body is read in 7-character pieces, escapes cut anywhere.
    const pieces: number[] = [];
    const tiny: ListStreamLimits = { pieceChars: 7, batchBytes: 0, onPiece: (n) => pieces.push(n) };
    const auth: AuthContext = { teamId: team.teamId, apiKeyId: 0, permission: 'FULL', domainId: null, rateLimit: 0 };
    const app = express();
    app.get('/', (req, res) => streamEmailList(api.deps, auth, listEmailsQuery.parse(req.query), res, tiny));
    const small = app.listen(0);
    try {
      const text = await fetch(`http://127.0.0.1:${(small.address() as AddressInfo).port}/`).then((r) => r.text());
      expect(text).toBe(await previous(0, 50));
      // 7 characters; an emoji is two UTF-16 units.
      expect(Math.max(...pieces)).toBeLessThanOrEqual(14);
    } finally {
      small.close();
    }
  });

  it('reads bodies only as fast as the client takes them (5 emails of 8 MB, a client that stops reading)', async () => {
    const team = await api.newTeam('Big');
    for (let i = 0; i < 5; i++) await insertEmail(team, { html: bigHtml(8 * MB, i + 1), text: 'plain', subject: `big${i}` });
    // The route's own limits (1 MB pieces), counted: what was read from PostgreSQL is what the
    // process holds or has queued on the socket. The previous implementation read the whole page
    // (40 MB, plus its JSON) before writing a byte.
    let readChars = 0;
    const app = express();
    const auth: AuthContext = { teamId: team.teamId, apiKeyId: 0, permission: 'FULL', domainId: null, rateLimit: 0 };
    const limits: ListStreamLimits = { ...DEFAULT_LIST_STREAM_LIMITS, onPiece: (n) => (readChars += n) };
    app.get('/', (req, res) => streamEmailList(api.deps, auth, listEmailsQuery.parse(req.query), res, limits));
    const slow = app.listen(0);
    try {
      // A slow client: it reads the first bytes, then stops; the server must wait (backpressure)
      // instead of reading and queueing the rest.
      let received = 0;
      let tail = '';
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/?limit=5`, resolve).on('error', reject),
      );
      expect(res.statusCode).toBe(200);
      await new Promise<void>((resolve) => res.once('data', (c: Buffer) => ((received += c.length), res.pause(), resolve())));
      const readWhilePaused = await settled(() => readChars);
      // What the socket buffers hold (kernel and Node, a few MB on loopback) plus the piece in
      // hand; a reader that ignored backpressure would have read all 40 MB.
      expect(readWhilePaused).toBeLessThan(16 * MB);

      res.on('data', (c: Buffer) => {
        received += c.length;
        tail = (tail + c.toString('latin1')).slice(-40);
      });
      res.resume();
      await new Promise((resolve) => res.on('end', resolve));
      expect(tail).toMatch(/"bcc":\["b@dest\.org"\]\}\],"count":5\}$/);
      expect(received).toBeGreaterThan(40 * MB);
      expect(readChars).toBe(5 * (8 * MB + 'plain'.length));
    } finally {
      slow.close();
    }
  }, 120_000);

  it('stops reading bodies when the client goes away, and closes the socket on an error mid-answer', async () => {
    const team = await api.newTeam('Leaver');
    for (let i = 0; i < 4; i++) await insertEmail(team, { html: bigHtml(MB, 10 + i), subject: `leave${i}` });
    const auth: AuthContext = { teamId: team.teamId, apiKeyId: 0, permission: 'FULL', domainId: null, rateLimit: 0 };
    const errors: unknown[] = [];
    const log = { ...api.deps.log, info: () => undefined, error: (o: unknown) => errors.push(o) } as unknown as Logger;
    const serve = (limits: ListStreamLimits) => {
      const app = express();
      app.get('/', (req, res) => streamEmailList({ ...api.deps, log }, auth, listEmailsQuery.parse(req.query), res, limits));
      const s = app.listen(0);
      return { s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/` };
    };

    // 4 MB in 16 KB pieces = 256 reads; the client leaves after the first bytes.
    let reads = 0;
    const leaving = serve({ pieceChars: 16 * 1024, batchBytes: 0, onPiece: () => reads++ });
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(leaving.url, (res) => res.once('data', () => (req.destroy(), resolve())));
        req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      });
      expect(await settled(() => reads)).toBeLessThan(64);
    } finally {
      leaving.s.close();
    }

    // A database error after the 200 went out: the client sees a cut connection, never valid JSON.
    let n = 0;
    const failing = serve({
      pieceChars: 64 * 1024,
      batchBytes: 0,
      onPiece: () => {
        if (++n === 5) throw new Error('database went away');
      },
    });
    try {
      const outcome = await new Promise<string>((resolve) => {
        http
          .get(failing.url, (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve(`ended: ${text.slice(-20)}`));
            res.on('error', () => resolve('cut'));
            res.on('aborted', () => resolve('cut'));
          })
          .on('error', () => resolve('cut'));
      });
      expect(outcome).toBe('cut');
      expect(errors).toEqual([
        expect.objectContaining({ err: expect.objectContaining({ message: 'database went away' }), teamId: team.teamId }),
      ]);
    } finally {
      failing.s.close();
    }
  }, 60_000);
});
