import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ADDRESS_IN_USE, PortTakenError, startOnFreePorts } from './free-port';
import { waitFor } from './wait-for';

// A PgBouncer of the test's own on a loopback port, in transaction mode, in front of the test
// PostgreSQL server (docs/pgbouncer.md). Debian's package: /usr/sbin/pgbouncer.

export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface LocalPgBouncer {
  port: number;
  /** The URL of `database` through PgBouncer, as an operator would set DATABASE_URL. */
  urlOf(database: string): string;
  stop(): Promise<void>;
}

export function pgBouncerUnavailable(): string | null {
  return existsSync(PGBOUNCER_BIN) ? null : `${PGBOUNCER_BIN} not found: apt-get install -y pgbouncer`;
}

/**
 * Starts PgBouncer in transaction mode, every database forwarded to the server of `serverUrl`
 * (auth trust on loopback). `serverTimeZone` is what a server connection starts with, so a test
 * can prove the clients' own UTC setting follows them across server connections.
 */
export async function startLocalPgBouncer(
  serverUrl: string,
  opts: { poolSize?: number; serverTimeZone?: string } = {},
): Promise<LocalPgBouncer> {
  // PgBouncer cannot report a port-0 bind: it gets a free port, and a new one if that was taken meanwhile.
  return startOnFreePorts(1, ([port]) => startOn(port, serverUrl, opts));
}

async function startOn(port: number, serverUrl: string, opts: { poolSize?: number; serverTimeZone?: string }): Promise<LocalPgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(path.join(tmpdir(), 'mr-pgbouncer-'));
  // PgBouncer refuses to run as root: it then runs as nobody, who must reach these files.
  chmodSync(dir, 0o777);
  const logFile = path.join(dir, 'pgbouncer.log');
  const dbParams = [`host=${server.hostname}`, `port=${server.port || 5432}`];
  if (opts.serverTimeZone) dbParams.push(`timezone=${opts.serverTimeZone}`);
  writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = ${dbParams.join(' ')}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${opts.poolSize ?? 20}`,
      'max_client_conn = 1000',
      `logfile = ${logFile}`,
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_BIN, [...(asRoot ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    if (!gone()) {
      child.kill('SIGINT'); // immediate shutdown
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  try {
    // Ready when its own log says it listens on the port: a connection could reach another process there.
    await waitFor(
      () => {
        if (gone()) {
          const text = log();
          if (ADDRESS_IN_USE.test(text)) throw new PortTakenError(`port ${port} taken before pgbouncer bound it`);
          throw new Error(`pgbouncer exited at start:\n${text}`);
        }
        return log().includes(`listening on 127.0.0.1:${port}`);
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'pgbouncer to listen' },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port,
    urlOf: (database) => `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}?pgbouncer=true`,
    stop,
  };
}
