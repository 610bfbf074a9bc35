import { spawn, type ChildProcess } from 'node:child_process';

// Children of a test bind port 0 and say which port they got: handing them a port picked
// beforehand (listen on 0, close, pass it on) races with anything else binding it meanwhile.
// Our processes (API, worker, SMTP relay) write the bound port in their JSON "listening" log line
// on stdout; spawnListening waits for that line. Whoever starts a child stops it and waits for
// its exit, on failure paths too: withListening does both around a block of test code.

export interface SpawnListeningOptions {
  command: string;
  args: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** The `msg` of the JSON log line that carries the bound port(s). */
  message: string;
  /** How long the child has to write that line (default 60 s: a cold `--import tsx` start on a loaded CI machine). */
  timeoutMs?: number;
  /** Also handed every chunk of the child's stdout and stderr (a log file). */
  onOutput?: (chunk: string) => void;
  /** Keep lines and output after the listening line (default true); false for a long-running, chatty child. */
  retainOutput?: boolean;
}

export interface ListeningChild {
  child: ChildProcess;
  /** The "listening" log line, parsed: the bound port(s) are in it. */
  listening: Record<string, unknown>;
  /** Every stdout line so far; it keeps filling while the child runs. */
  lines: string[];
  /** stdout and stderr so far. */
  output(): string;
  /** Its exit code (null when a signal ended it), once its output is all read. */
  exited: Promise<number | null>;
  /** `signal` (default SIGTERM), SIGKILL if it has not exited after `killAfterMs` (default 20 s); answers the exit code. */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | null>;
}

/** Starts a child and answers once its JSON log line `message` is on stdout; stops the child if that line never comes. */
export async function spawnListening(opts: SpawnListeningOptions): Promise<ListeningChild> {
  const child = spawn(opts.command, opts.args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let output = '';
  let partial = '';
  let listening: Record<string, unknown> | null = null;
  let announced: () => void = () => undefined;
  const listeningSeen = new Promise<void>((resolve) => (announced = resolve));
  const retain = () => !listening || opts.retainOutput !== false;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    opts.onOutput?.(chunk);
    if (!retain()) return;
    output += chunk;
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const line of parts.filter(Boolean)) {
      lines.push(line);
      if (listening) continue;
      const parsed = parseJsonLine(line);
      if (parsed?.msg === opts.message) {
        listening = parsed;
        announced();
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    opts.onOutput?.(chunk);
    if (retain()) output += chunk;
  });
  // 'close', not 'exit': its last output has been read by then (lines, output, the error below).
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 20_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const kill = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      await exited.finally(() => clearTimeout(kill));
    }
    return exited;
  };

  const timeoutMs = opts.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    listeningSeen.then(() => 'listening' as const),
    exited.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (outcome !== 'listening' || !listening) {
    await stop('SIGKILL');
    const why = outcome === 'exited' ? `exited (${child.exitCode ?? child.signalCode})` : `did not write it within ${timeoutMs} ms`;
    throw new Error(
      `${opts.command} ${opts.args.join(' ')}: waited for the log line "${opts.message}", the child (pid ${child.pid}) ${why}:\n${output.slice(-4000)}`,
    );
  }
  return { child, listening, lines, output: () => output, exited, stop };
}

/** Runs `use` with a started child and stops the child (waiting for its exit) however `use` ends. */
export async function withListening<T>(opts: SpawnListeningOptions, use: (c: ListeningChild) => Promise<T>): Promise<T> {
  const c = await spawnListening(opts);
  try {
    return await use(c);
  } finally {
    await c.stop('SIGKILL');
  }
}

/** A port number in the listening line, at a dotted path (`port`, `ports.tls`); throws when it is not one. */
export function portIn(listening: Record<string, unknown>, dottedPath: string): number {
  const value = dottedPath.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], listening);
  if (typeof value !== 'number' || !(value > 0)) throw new Error(`no port at ${dottedPath} in ${JSON.stringify(listening)}`);
  return value;
}

function parseJsonLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}
