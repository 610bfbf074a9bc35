// A PostgreSQL error reaches us in two shapes: node-postgres's own (the committer's pool: `code` is
// the SQLSTATE, `constraint` the constraint's name) or wrapped by Prisma's driver adapter, whose
// own `code` is generic (P2010...) and whose cause carries the SQLSTATE and the server's message.

interface AdapterCause {
  originalCode?: string;
  originalMessage?: string;
  code?: string;
}

function adapterCause(err: unknown): AdapterCause | undefined {
  return (err as { meta?: { driverAdapterError?: { cause?: AdapterCause } } } | undefined)?.meta?.driverAdapterError?.cause;
}

/** Every code the error carries: its own, and the adapter cause's SQLSTATE and error code. */
export function errorCodes(err: unknown): string[] {
  const cause = adapterCause(err);
  return [(err as { code?: unknown } | undefined)?.code, cause?.originalCode, cause?.code].filter(
    (c): c is string => typeof c === 'string' && c !== '',
  );
}

/** The error is SQLSTATE `sqlState`, in either shape. */
export function hasSqlState(err: unknown, sqlState: string): boolean {
  return (err as { code?: unknown } | undefined)?.code === sqlState || adapterCause(err)?.originalCode === sqlState;
}

/** The error is SQLSTATE `sqlState` on the constraint `name` (the adapter gives the name only in its message). */
export function violatesConstraint(err: unknown, sqlState: string, name: string): boolean {
  const pg = err as { code?: unknown; constraint?: unknown } | undefined;
  if (pg?.code === sqlState && pg.constraint === name) return true;
  const cause = adapterCause(err);
  return cause?.originalCode === sqlState && (cause.originalMessage ?? '').includes(name);
}

/** A statement stopped by statement_timeout (or cancelled): SQLSTATE 57014 query_canceled. */
export const isQueryCanceled = (err: unknown) => hasSqlState(err, '57014');
