import { connect, createServer, type AddressInfo } from 'node:net';
import { portIn, spawnListening, withListening } from './spawn-listening';
import { PortTakenError, startOnFreePorts } from './free-port';

// A real child: binds port 0, writes its port in a JSON log line (as our processes do), then
// echoes what a client sends it.
const echoServer = `
const net = require('node:net');
const server = net.createServer((s) => s.pipe(s)).listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'echo listening', port: server.address().port }));
});
`;
const echo = { command: process.execPath, args: ['-e', echoServer], env: { PATH: process.env.PATH }, message: 'echo listening' };

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const roundTrip = (port: number, text: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('data', (d) => (resolve(d.toString()), socket.destroy()));
    socket.once('error', reject);
    socket.write(text);
  });

it('reads the port the child bound from its log line, and that port reaches the child', async () => {
  await withListening(echo, async (c) => {
    const port = portIn(c.listening, 'port');
    expect(await roundTrip(port, 'ping')).toBe('ping');
  });
});

it('stops the child and waits for its exit when the code using it throws', async () => {
  let pid = 0;
  await expect(
    withListening(echo, async (c) => {
      pid = c.child.pid!;
      throw new Error('the test failed');
    }),
  ).rejects.toThrow('the test failed');
  expect(pid).toBeGreaterThan(0);
  // Reaped, not merely signalled: no process is left under that pid.
  expect(isRunning(pid)).toBe(false);
});

it('fails with the exit code and output of a child that exits before its listening line', async () => {
  const start = spawnListening({ ...echo, args: ['-e', 'console.error("no config"); process.exit(3)'] });
  await expect(start).rejects.toThrow(/exited \(3\)[\s\S]*no config/);
});

it('stops a child that never writes its listening line', async () => {
  // The pid comes from the error, not the child's output: on a loaded machine the child may not
  // have run a line of its own before the 500 ms are up.
  const hanging = { ...echo, args: ['-e', 'setInterval(() => undefined, 1000)'], timeoutMs: 500 };
  const err = (await spawnListening(hanging).catch((e: unknown) => e)) as Error;
  expect(err.message).toMatch(/did not write it within 500 ms/);
  const pid = Number(/\(pid (\d+)\)/.exec(err.message)?.[1]);
  expect(pid).toBeGreaterThan(0);
  expect(isRunning(pid)).toBe(false);
});

it('draws new ports when a third-party server finds its port taken', async () => {
  // The first draw "finds" its port taken, as a server would if another process bound it first.
  const tried: number[][] = [];
  const ports = await startOnFreePorts(2, async (p) => {
    tried.push(p);
    if (tried.length === 1) throw new PortTakenError(`port ${p[0]} taken`);
    return p;
  });
  expect(tried).toHaveLength(2);
  expect(ports).toEqual(tried[1]);
  expect(new Set(ports).size).toBe(2);
  // Other failures are not retried.
  await expect(startOnFreePorts(1, () => Promise.reject(new Error('no binary')))).rejects.toThrow('no binary');
});

it('freePorts holds its ports until all are drawn: they are distinct and free', async () => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port: taken } = server.address() as AddressInfo;
    const ports = await startOnFreePorts(5, async (p) => p);
    expect(new Set(ports).size).toBe(5);
    expect(ports).not.toContain(taken);
  } finally {
    server.close();
  }
});
