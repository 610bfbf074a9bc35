// The open-loop load generator of the email bench (bench/emails/bench-kit.ts): the p99 target of
// issue 21 §4 is read from it, so it must offer the rate it is given and time each request from
// the moment it fell due, including the time it waited behind a stalled server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { measureOpenLoop, type BenchServer, type Load } from '../../bench/emails/bench-kit';

async function serve(handler: http.RequestListener): Promise<{ server: http.Server; bench: BenchServer }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // The CPU figures read this process's /proc entry: the server runs in the test's own process.
  const bench = { name: 'test', child: { pid: process.pid }, base: `http://127.0.0.1:${port}` } as unknown as BenchServer;
  return { server, bench };
}

const load: Load = { path: '/send', headers: { 'content-type': 'application/json' }, body: '{"to":"a@b.c"}', connections: 1, duration: 1 };

describe('measureOpenLoop', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('offers the rate it is given and times each request from when it was due', async () => {
    let received = 0;
    const s = await serve((req, res) => {
      req.resume();
      received++;
      setTimeout(() => res.end('{}'), 20);
    });
    server = s.server;
    // One request every 50 ms: a request sent one interval late would read about 70 ms.
    const figures = await measureOpenLoop(s.bench, { ...load, duration: 1.5 }, 20);
    expect(received).toBe(30);
    expect(figures.non2xx + figures.errors).toBe(0);
    expect(figures.p50).toBeGreaterThanOrEqual(20);
    expect(figures.p50).toBeLessThan(50);
    expect(figures.requestsPerSec).toBeGreaterThan(18);
  });

  it('keeps sending while the server stalls, so the stall shows in every request that fell due during it', async () => {
    // The server holds every request of the 300 ms after the first one arrives, then answers them
    // all: a closed loop with one connection would record one slow request; an open loop keeps
    // sending (about 60 of 600 are held) and times each from when it fell due. The window starts
    // at the first request, not at the server's start, so a slow start on a busy machine cannot
    // shrink it. Three seconds, not one: the generator runs in this process, and a stall of the
    // test machine itself (seen once in CI, p50 277 ms over one second) makes every request due
    // during it late too; over 3 s it would take a stall of 1.5 s to reach the median.
    let stallEndsAt: number | undefined;
    const held: http.ServerResponse[] = [];
    const s = await serve((req, res) => {
      req.resume();
      if (stallEndsAt === undefined) {
        stallEndsAt = Date.now() + 300;
        setTimeout(() => held.forEach((r) => r.end('{}')), 300);
      }
      if (Date.now() < stallEndsAt) held.push(res);
      else res.end('{}');
    });
    server = s.server;
    const figures = await measureOpenLoop(s.bench, { ...load, duration: 3 }, 200);
    expect(held.length).toBeGreaterThan(30);
    expect(figures.p99).toBeGreaterThanOrEqual(200);
    expect(figures.p50).toBeLessThan(100);
  });

  it("reports the generator's own lateness apart from the server's", async () => {
    // The server runs in this process: blocking its event loop for 200 ms, once, also stops the
    // generator, so the requests due meanwhile leave late. The lateness shows in sendLagP99, and a
    // generator that was never blocked reports almost none.
    let blocked = false;
    const s = await serve((req, res) => {
      req.resume();
      if (!blocked) {
        blocked = true;
        const until = performance.now() + 200;
        while (performance.now() < until); // the block
      }
      res.end('{}');
    });
    server = s.server;
    const late = await measureOpenLoop(s.bench, { ...load, duration: 1 }, 200);
    expect(late.sendLagP99).toBeGreaterThanOrEqual(100);
    expect(late.p99).toBeGreaterThanOrEqual(100);
    const steady = await measureOpenLoop(s.bench, { ...load, duration: 1 }, 50);
    expect(steady.sendLagP99).toBeLessThan(50);
  });

  it('leaves the warm-up out of the figures', async () => {
    // The server stalls for the first 300 ms; with 500 ms of warm-up at the same rate the stall
    // lies before the measured half second.
    let received = 0;
    let stallEndsAt: number | undefined;
    const held: http.ServerResponse[] = [];
    const s = await serve((req, res) => {
      req.resume();
      received++;
      stallEndsAt ??= Date.now() + 300;
      if (Date.now() < stallEndsAt) {
        if (held.push(res) === 1) setTimeout(() => held.forEach((r) => r.end('{}')), 300);
      } else res.end('{}');
    });
    server = s.server;
    const figures = await measureOpenLoop(s.bench, { ...load, duration: 0.5 }, 100, { warmUpSeconds: 0.5 });
    expect(received).toBe(100);
    expect(held.length).toBeGreaterThan(10);
    expect(figures.p99).toBeLessThan(100);
    expect(figures.requestsPerSec).toBeLessThan(120);
  });

  it('counts answers outside 2xx', async () => {
    const s = await serve((req, res) => {
      req.resume();
      res.statusCode = 429;
      res.end('{}');
    });
    server = s.server;
    const figures = await measureOpenLoop(s.bench, { ...load, duration: 0.5 }, 100);
    expect(figures.non2xx).toBe(50);
    expect(figures.errors).toBe(0);
  });
});
