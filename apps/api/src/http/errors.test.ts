import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { Client } from 'pg';
import { testServerUrl } from '@mailrail/testing/databases';
import { isUnavailable } from '@mailrail/domain/errors/unavailable';
import { createRedis } from '@mailrail/platform/redis/client';
import { freePort } from '@mailrail/testing/free-port';
import { errorHandler } from './errors';

// The shape Prisma 7's pg driver adapter throws when PostgreSQL terminates the backend mid-query
// (seen by the fault scenario `npm run test:faults -- 4`, which answered 500 before this fix).
function prismaWrapped(originalCode: string, message: string): Error {
  return Object.assign(
    new Error(`Invalid \`prisma.$executeRawUnsafe()\` invocation:\n\nRaw query failed. Code: \`${originalCode}\`. Message: \`${message}\``),
    {
      name: 'PrismaClientKnownRequestError',
      code: 'P2010',
      meta: {
        driverAdapterError: {
          name: 'DriverAdapterError',
          cause: { originalCode, originalMessage: message, kind: 'postgres', code: originalCode },
        },
      },
    },
  );
}

describe('isUnavailable', () => {
  it('treats a terminated PostgreSQL backend behind Prisma as unavailable (503)', () => {
    expect(isUnavailable(prismaWrapped('57P01', 'terminating connection due to administrator command'))).toBe(true);
  });

  it('treats a bare connection reset as unavailable', () => {
    expect(isUnavailable(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
  });

  it('treats Redis out of reach as unavailable: the errors ioredis really throws', async () => {
    // A port nothing listens on: refused connections are what is under test, so no child binds it
    // (a process taking it meanwhile would only turn refused into some other unavailability).
    const port = await freePort();
    const single = createRedis(`redis://127.0.0.1:${port}`);
    single.on('error', () => undefined);
    const cluster = new Cluster([{ host: '127.0.0.1', port }], { clusterRetryStrategy: () => null });
    cluster.on('error', () => undefined);
    try {
      const errors = await Promise.all([single.get('k').catch((e: Error) => e), cluster.get('k').catch((e: Error) => e)]);
      for (const err of errors) expect([err, isUnavailable(err)]).toEqual([err, true]);
    } finally {
      single.disconnect();
      cluster.disconnect();
    }
    for (const reply of [
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      "READONLY You can't write against a read only replica.",
      // ioredis's cluster client after its redirections ran out during a kill -9 failover (seen in test/scale).
      'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down',
    ]) {
      expect(isUnavailable(new Error(reply))).toBe(true);
    }
  });

  it('treats connection exhaustion and refused connections as unavailable, in every shape they arrive in', () => {
    const nodePostgres = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });
    // Prisma's adapter turns 53300 into kind TooManyConnections: P2037 from a model call, P2010 from a raw query.
    const prismaTooMany = (code: string, message: string) =>
      Object.assign(new Error(message), {
        name: 'PrismaClientKnownRequestError',
        code,
        meta: {
          driverAdapterError: {
            name: 'DriverAdapterError',
            cause: { kind: 'TooManyConnections', cause: 'sorry, too many clients already' },
          },
        },
      });
    for (const err of [
      nodePostgres('53300', 'sorry, too many clients already'),
      nodePostgres('53300', 'too many connections for role "mailrail"'),
      nodePostgres('57P03', 'the database system is starting up'),
      nodePostgres('08006', 'connection failure'),
      nodePostgres('08001', 'could not connect to server'),
      prismaWrapped('53300', 'sorry, too many clients already'),
      prismaWrapped('57P03', 'the database system is in recovery mode'),
      prismaWrapped('08006', 'connection failure'),
      prismaTooMany('P2037', 'Too many database connections opened: sorry, too many clients already'),
      prismaTooMany('P2010', 'Raw query failed. Code: `N/A`. Message: `sorry, too many clients already`'),
    ]) {
      expect([err.message, isUnavailable(err)]).toEqual([err.message, true]);
    }
  });

  it("treats PostgreSQL's real refusal of one more connection (53300) as unavailable", async () => {
    // A login role with CONNECTION LIMIT 0 gets the server's own too_many_connections error.
    const role = `mailrail_limit_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: testServerUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 0`);
      const url = new URL(testServerUrl);
      url.username = role;
      url.pathname = '/postgres';
      const client = new Client({ connectionString: url.toString() });
      const err = await client.connect().then(
        () => null,
        (e: unknown) => e,
      );
      await client.end().catch(() => undefined);
      expect((err as { code?: string } | null)?.code).toBe('53300');
      expect(isUnavailable(err)).toBe(true);
    } finally {
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it('leaves other database errors as errors (500)', () => {
    expect(isUnavailable(prismaWrapped('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(isUnavailable(new Error('boom'))).toBe(false);
  });
});

describe('errorHandler', () => {
  /** The part of a node ServerResponse errorHandler writes: headers, writeHead and end. */
  const fakeResponse = () => {
    const out = { status: 0, text: '', headers: {} as Record<string, unknown> };
    const response = {
      headersSent: false,
      setHeader: (name: string, value: string) => ((out.headers[name] = value), response),
      writeHead: (status: number, headers: Record<string, unknown>) => (
        (out.status = status),
        Object.assign(out.headers, headers),
        response
      ),
      end: (text: string) => ((out.text = text), response),
    };
    return {
      response: response as unknown as ServerResponse,
      get status() {
        return out.status;
      },
      headers: out.headers,
      body: () => JSON.parse(out.text) as unknown,
    };
  };

  it('answers too many PostgreSQL clients with a 503 and Retry-After, not a 500', () => {
    const res = fakeResponse();
    const err = Object.assign(new Error('sorry, too many clients already'), { code: '53300', severity: 'FATAL' });
    errorHandler(err, {}, res.response, () => undefined);
    expect([res.status, res.headers['Retry-After']]).toEqual([503, '1']);
    expect(res.body()).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: 'Service temporarily unavailable, retry shortly' } });
  });

  it("answers express's URIError for a malformed %-encoded route parameter with a 400, not a 500", () => {
    const res = fakeResponse();
    const err = Object.assign(new URIError("Failed to decode param '%ff%fe'"), { status: 400 });
    errorHandler(err, {}, res.response, () => undefined);
    expect(res.status).toBe(400);
    expect(res.body()).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: 'Invalid path: malformed percent-encoding',
        issues: [{ path: [], message: 'malformed percent-encoding' }],
      },
    });
  });
});
