// The open-loop load generator of the email bench: a steady offered rate whatever the server does.
// Time and transport are ports, so test/bench/open-loop-load.test.ts drives its timing rules with a
// stepped clock and answers requests when it chooses, without a network or this machine's speed.
import http from 'node:http';

/** Milliseconds, and a repeating tick; `every` answers the function that stops it. */
export interface LoadClock {
  now(): number;
  every(ms: number, tick: () => void): () => void;
}

export const realLoadClock: LoadClock = {
  now: () => performance.now(),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    return () => clearInterval(timer);
  },
};

/** Sends one request; calls `answered` once, with the HTTP status, or with undefined when it failed. */
export type SendRequest = (answered: (status: number | undefined) => void) => void;

/** What one run measured; latencies and lags in ms. */
export interface OpenLoopRun {
  total: number;
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** How late the generator itself handed requests over, from when each was due. */
  sendLagP99: number;
}

/** POSTs `body` to `url` over `agent`'s keep-alive connections. */
export function httpSender(url: URL, headers: Record<string, string>, body: Buffer, agent: http.Agent): SendRequest {
  const withLength = { ...headers, 'content-length': String(body.length) };
  return (answered) => {
    let done = false;
    const answer = (status: number | undefined) => {
      if (!done) answered(status);
      done = true;
    };
    const req = http.request(url, { method: 'POST', headers: withLength, agent }, (res) => {
      res.resume();
      res.on('end', () => answer(res.statusCode));
      res.on('error', () => answer(undefined));
    });
    req.on('error', () => answer(undefined));
    req.end(body);
  };
}

/**
 * `rate` requests a second for `durationSeconds`, checked every millisecond: request i is due at
 * start + i / rate and sent at the first tick at or after that, whether or not earlier ones were
 * answered. Each latency runs from when the request was due, so a late send (a busy generator, no
 * free connection) and a stall of the server count in every request due meanwhile. Resolves once
 * every request is answered.
 */
export function openLoop(send: SendRequest, rate: number, durationSeconds: number, clock: LoadClock = realLoadClock): Promise<OpenLoopRun> {
  const latencies: number[] = [];
  const sendLags: number[] = [];
  const total = Math.round(durationSeconds * rate);
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  let answered = 0;
  const start = clock.now();
  return new Promise((resolve) => {
    const finish = () => {
      const percentile = (xs: number[], q: number) => Math.round(xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN);
      latencies.sort((a, b) => a - b);
      sendLags.sort((a, b) => a - b);
      resolve({
        total: sent,
        perSecond: sent / ((clock.now() - start) / 1000),
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        non2xx,
        errors,
        sendLagP99: percentile(sendLags, 0.99),
      });
    };
    const sendOne = (dueAt: number) => {
      sendLags.push(clock.now() - dueAt);
      send((status) => {
        latencies.push(clock.now() - dueAt);
        if (status === undefined) errors++;
        else if (status < 200 || status >= 300) non2xx++;
        if (++answered === total) finish();
      });
    };
    if (total === 0) return finish();
    const tick = () => {
      // Those due by now are the first floor(elapsed * rate) + 1.
      const due = Math.min(total, Math.floor(((clock.now() - start) * rate) / 1000) + 1);
      for (; sent < due; sent++) sendOne(start + (sent * 1000) / rate);
      if (sent >= total) stop();
    };
    const stop = clock.every(1, tick);
    tick(); // the first request is due at the start
  });
}
