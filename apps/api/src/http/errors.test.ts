import type { Request, Response } from 'express';
import { Cluster } from 'ioredis';
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
    ]) {
      expect(isUnavailable(new Error(reply))).toBe(true);
    }
  });

  it('leaves other database errors as errors (500)', () => {
    expect(isUnavailable(prismaWrapped('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(isUnavailable(new Error('boom'))).toBe(false);
  });
});

describe('errorHandler', () => {
  it("answers express's URIError for a malformed %-encoded route parameter with a 400, not a 500", () => {
    let status = 0;
    let body: unknown;
    const res = {
      headersSent: false,
      status: (s: number) => ((status = s), res),
      json: (b: unknown) => ((body = b), res),
      setHeader: () => res,
    };
    const err = Object.assign(new URIError("Failed to decode param '%ff%fe'"), { status: 400 });
    errorHandler(err, { log: undefined } as unknown as Request, res as unknown as Response, () => undefined);
    expect(status).toBe(400);
    expect(body).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: 'Invalid path: malformed percent-encoding',
        issues: [{ path: [], message: 'malformed percent-encoding' }],
      },
    });
  });
});
