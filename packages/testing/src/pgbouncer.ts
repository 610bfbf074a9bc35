import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Socket } from 'node:net';
import { freePort } from './free-port';
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
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'mr-pgbouncer-'));
  // PgBouncer refuses to run as root: it then runs as nobody, who must reach these files.
  chmodSync(dir, 0o777);
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
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_BIN, [...(asRoot ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')], {
    stdio: 'ignore',
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitFor(
    async () => {
      if (exited) throw new Error(`pgbouncer exited at start (see ${dir}/pgbouncer.log)`);
      return listening(port);
    },
    { timeoutMs: 10_000, what: 'pgbouncer to listen' },
  );
  return {
    port,
    urlOf: (database) => `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}?pgbouncer=true`,
    stop: async () => {
      if (!exited) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT'); // immediate shutdown
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.connect(port, '127.0.0.1');
  });
}
