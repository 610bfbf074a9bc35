// The open-loop load generator of the email bench (bench/emails/open-loop.ts): the p99 target of
// issue 21 §4 is read from it, so it must offer the rate it is given and time each request from
// the moment it fell due, including the time it waited behind a stalled server. Its timing rules
// run on a stepped clock with requests answered when the test says; the HTTP sender is checked on
// a real server by what it counts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { measureOpenLoop, type BenchServer, type Load } from '../../bench/emails/bench-kit';
import { openLoop, type LoadClock, type SendRequest } from '../../bench/emails/open-loop';

/** Time moves only when the test says, one millisecond at a time; timers fire in due order. */
class SteppedClock implements LoadClock {
  private t = 0;
  private ticks = new Set<() => void>();
  private timers: { at: number; fn: () => void }[] = [];
  now = () => this.t;
  every = (_ms: number, tick: () => void) => {
    this.ticks.add(tick);
    return () => void this.ticks.delete(tick);
  };
  after(ms: number, fn: () => void) {
    this.timers.push({ at: this.t + ms, fn });
  }
  /** Steps to `t`; with `blocked`, jumps there at once, as an event loop that was blocked. */
  advanceTo(t: number, opts: { blocked?: boolean } = {}) {
    while (this.t < t) {
      this.t = opts.blocked ? t : this.t + 1;
      for (const timer of this.timers.filter((x) => x.at <= this.t)) {
        this.timers.splice(this.timers.indexOf(timer), 1);
        timer.fn();
      }
      for (const tick of [...this.ticks]) tick();
    }
  }
}

/** A transport whose requests the test answers (a second answer is ignored): each records when it was handed over. */
function heldRequests(clock: SteppedClock) {
  const requests: { sentAt: number; answer: (status: number | undefined) => void }[] = [];
  const send: SendRequest = (answered) => {
    let done = false;
    requests.push({ sentAt: clock.now(), answer: (status) => done || ((done = true), answered(status)) });
  };
  return { requests, send };
}

describe('openLoop', () => {
  it('offers the rate it is given and times each request from when it was due', async () => {
    const clock = new SteppedClock();
    // Every request answered 20 ms after it was handed over.
    const send: SendRequest = (answered) => clock.after(20, () => answered(200));
    const run = openLoop(send, 20, 1.5, clock);
    clock.advanceTo(1500);
    const figures = await run;
    expect(figures.total).toBe(30);
    expect([figures.p50, figures.p99, figures.sendLagP99]).toEqual([20, 20, 0]);
    // The last one is due at 1,450 ms and answered at 1,470.
    expect(figures.perSecond).toBe(30 / 1.47);
  });

  it('keeps sending while the server stalls, so the stall shows in every request that fell due during it', async () => {
    // The server holds every request of the first 300 ms, then answers each at once: a closed
    // loop over one connection would send one request during the stall and record one slow one.
    const clock = new SteppedClock();
    const { requests, send } = heldRequests(clock);
    const run = openLoop(send, 200, 3, clock);
    clock.advanceTo(299);
    expect(requests.map((r) => r.sentAt)).toEqual(Array.from({ length: 60 }, (_, i) => i * 5));
    clock.advanceTo(300);
    requests.forEach((r) => r.answer(200));
    for (let t = 301; t <= 3000; t++) {
      clock.advanceTo(t);
      requests.slice(61).forEach((r) => r.answer(200));
    }
    const figures = await run;
    expect(figures.total).toBe(600);
    // Held: due at 0, 5, ..., 295, answered at 300 (300 .. 5 ms); the 540 others took no time.
    expect(figures.p50).toBe(0);
    expect(figures.p99).toBe(275);
    expect(figures.sendLagP99).toBe(0);
  });

  it("reports the generator's own lateness apart from the server's", async () => {
    // The event loop is blocked from 100 to 300 ms: the requests due meanwhile leave late, at 300.
    const clock = new SteppedClock();
    const { requests, send } = heldRequests(clock);
    const late = openLoop(send, 200, 1, clock);
    clock.advanceTo(100);
    clock.advanceTo(300, { blocked: true });
    clock.advanceTo(1000);
    requests.forEach((r) => r.answer(200));
    // 40 requests due at 105 .. 300 were handed over at 300, 195 .. 0 ms late.
    const figures = await late;
    expect(figures.sendLagP99).toBe(190);
    expect(figures.p99).toBeGreaterThanOrEqual(figures.sendLagP99);

    // A generator that was never blocked hands every request over when it is due.
    const steadyClock = new SteppedClock();
    const steadyRequests = heldRequests(steadyClock);
    const steady = openLoop(steadyRequests.send, 200, 1, steadyClock);
    steadyClock.advanceTo(1000);
    steadyRequests.requests.forEach((r) => r.answer(200));
    expect((await steady).sendLagP99).toBe(0);
  });

  it('counts answers outside 2xx and failed requests apart', async () => {
    const clock = new SteppedClock();
    const { requests, send } = heldRequests(clock);
    const run = openLoop(send, 100, 0.5, clock);
    clock.advanceTo(500);
    requests.forEach((r, i) => r.answer(i % 5 === 0 ? undefined : i % 2 === 0 ? 429 : 202));
    const figures = await run;
    expect([figures.total, figures.errors, figures.non2xx]).toEqual([50, 10, 20]);
  });
});

describe('measureOpenLoop', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function serve(handler: http.RequestListener): Promise<BenchServer> {
    server = http.createServer(handler);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // The CPU figures read this process's /proc entry: the server runs in the test's own process.
    return { name: 'test', child: { pid: process.pid }, base: `http://127.0.0.1:${port}` } as unknown as BenchServer;
  }

  const load: Load = {
    path: '/send',
    headers: { 'content-type': 'application/json' },
    body: '{"to":"a@b.c"}',
    connections: 1,
    duration: 0.5,
  };

  it('leaves the warm-up out of the figures', async () => {
    // Every warm-up request is held until 5,000 ms; the measured ones are answered as they come.
    const clock = new SteppedClock();
    const bench = await serve(() => undefined);
    const { requests, send } = heldRequests(clock);
    const run = measureOpenLoop(bench, load, 100, { warmUpSeconds: 0.5, send, clock });
    clock.advanceTo(500);
    expect(requests).toHaveLength(50);
    clock.advanceTo(5000);
    requests.forEach((r) => r.answer(200));
    // The measured run starts once the warm-up's answers are in.
    await new Promise((r) => setImmediate(r));
    for (let t = 5000; t <= 5500; t++) {
      clock.advanceTo(t);
      requests.slice(50).forEach((r) => r.answer(200));
    }
    const figures = await run;
    expect(requests).toHaveLength(100);
    // 50 requests from 5,000 to the last answer at 5,490 ms.
    expect([figures.p50, figures.p99, figures.requestsPerSec]).toEqual([0, 0, Math.round(50 / 0.49)]);
  });

  it('sends over HTTP: every request reaches the server, its answers counted by status', async () => {
    let received = 0;
    const bench = await serve((req, res) => {
      req.resume();
      res.statusCode = ++received % 2 === 0 ? 429 : 202;
      res.end('{}');
    });
    const figures = await measureOpenLoop(bench, load, 100);
    expect(received).toBe(50);
    expect([figures.non2xx, figures.errors]).toEqual([25, 0]);
  });
});
