import net from 'node:net';

// A bare SMTP conversation over a plain connection, for what a full client hides: the exact
// reply to each command, and the EHLO capabilities offered before STARTTLS.

export interface SmtpDialog {
  /** The greeting or the reply to the last command, every line of a multi-line reply. */
  greeting: string[];
  /** Sends one command line and resolves with its reply (all lines). */
  command(line: string): Promise<string[]>;
  /** The next reply the server sends unasked (a 421 of a timeout), or the one to bytes sent with `write`. */
  reply(): Promise<string[]>;
  /** Sends bytes as they are (message data), without waiting for a reply. */
  write(data: string | Buffer): void;
  /** Resolves once the server closed the connection. */
  closed: Promise<void>;
  close(): void;
}

export async function openSmtpDialog(port: number): Promise<SmtpDialog> {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  let pending: { lines: string[]; resolve: (lines: string[]) => void } | null = null;
  const queued: string[][] = [];
  let current: string[] = [];
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      current.push(line);
      // "250-..." continues a reply, "250 ..." ends it.
      if (line.length < 4 || line[3] !== '-') {
        const done = current;
        current = [];
        if (pending) {
          const p = pending;
          pending = null;
          p.resolve(done);
        } else queued.push(done);
      }
    }
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const next = () => new Promise<string[]>((resolve) => (queued.length ? resolve(queued.shift()!) : (pending = { lines: [], resolve })));
  const greeting = await next();
  return {
    greeting,
    command: (line) => {
      socket.write(`${line}\r\n`);
      return next();
    },
    reply: next,
    write: (data) => socket.write(data),
    closed,
    close: () => socket.destroy(),
  };
}
