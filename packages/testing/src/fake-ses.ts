import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';

// A fake SES v2 endpoint for tests: a real HTTP server on 127.0.0.1 that speaks enough of the
// SES v2 REST-JSON API for the real SDK (SendEmail with Raw content, GetAccount), records every
// accepted message, and injects the failures SES produces in real life. Tests point SES_ENDPOINT
// at `fake.url` and use the real @aws-sdk/client-sesv2 over HTTP.

const EMAIL_ID_HEADER = /^X-Usesend-Email-ID: (\S+)/im;

/** Our email id in a message the fake SES accepted (the X-Usesend-Email-ID header the worker adds). */
export function emailIdOf(raw: string): string | undefined {
  return EMAIL_ID_HEADER.exec(raw)?.[1];
}

export interface FakeSesMessage {
  messageId: string;
  /** The raw MIME exactly as the client sent it (Content.Raw.Data decoded). */
  raw: string;
  destination: { to: string[]; cc: string[]; bcc: string[] };
  configurationSetName?: string;
  fromEmailAddress?: string;
  /** Region from the request signature's credential scope. */
  region?: string;
  /** Date.now() when the message was accepted. */
  at: number;
  /**
   * Date.now() when the request reached the fake: what SES counts against the sending rate. Read
   * off the test's thread with `stampArrivalsOffThread`, else on it.
   */
  arrivedAt: number;
}

export interface FakeSesOptions {
  /**
   * Stamp each request's arrival in a thread of its own that forwards it to the fake. The test's
   * thread can stall for tens of milliseconds (jest's garbage collection, the test's own work), and
   * every request that arrives meanwhile would be stamped when it ends, bunched: rate tests measure
   * the sender, not the runner (test/timing/scale/shared-rate.test.ts).
   */
  stampArrivalsOffThread?: boolean;
}

export type FakeSesFault =
  /** ThrottlingException, as SES answers when the sending rate is exceeded (HTTP 400 or 429). */
  | { kind: 'throttle'; status?: 400 | 429 }
  /** TooManyRequestsException (HTTP 429). */
  | { kind: 'tooManyRequests' }
  /** A 5xx answer (InternalFailure by default). */
  | { kind: 'serverError'; status?: number; name?: string }
  /** Answer only after delayMs, beyond the client timeout; `accept` records the message anyway
   * (SES accepted it but the answer never reached the client). */
  | { kind: 'timeout'; delayMs: number; accept?: boolean }
  /** MessageRejected by default; any other modeled error by name and status. */
  | { kind: 'reject'; name?: string; status?: number; message?: string };

export interface FakeSesSendRequest {
  /** 1-based count of SendEmail calls seen so far, this one included. */
  call: number;
  raw: string;
  destination: FakeSesMessage['destination'];
  configurationSetName?: string;
}

export type FakeSesRule = (req: FakeSesSendRequest) => FakeSesFault | undefined;

export interface FakeSes {
  url: string;
  messages: FakeSesMessage[];
  /** Every SendEmail call, faulted ones included. */
  sendCalls: number;
  /** SendQuota.MaxSendRate answered by GetAccount; null answers GetAccount with a 404. */
  maxSendRate: number | null;
  /** Delay in ms before every successful answer (to make concurrent sends overlap). */
  latencyMs: number;
  /**
   * Accept the message when the request arrives and answer after latencyMs, as SES does (its
   * answer travels after it took the message): a client killed meanwhile never learns the
   * message id. False (the default) accepts only when answering.
   */
  acceptBeforeLatency: boolean;
  /** Called with every accepted message, e.g. to publish SES's Send event for it. */
  onAccept: ((message: FakeSesMessage) => void) | null;
  /** Fault for the next n SendEmail calls. */
  failNext(n: number, fault: FakeSesFault): void;
  /** A rule asked on every SendEmail call (after failNext); undefined lets the call succeed. */
  setRule(rule: FakeSesRule | null): void;
  /** Fault on each SendEmail call with probability p. */
  failWithProbability(p: number, fault: FakeSesFault): void;
  /** Messages sent to an address (to, cc or bcc). */
  messagesTo(address: string): FakeSesMessage[];
  /**
   * Requests the arrival thread has stamped so far (0 without stampArrivalsOffThread), read from
   * memory it shares with that thread: it counts even while the test's thread is busy.
   */
  stampedArrivals(): number;
  reset(): void;
  close(): Promise<void>;
}

const SEND_PATH = '/v2/email/outbound-emails';
const ACCOUNT_PATH = '/v2/email/account';

const ARRIVED_AT_HEADER = 'x-fake-ses-arrived-at';
// The arrival stamp's thread: a plain HTTP pass-through (CommonJS source, as the thread runs it
// without the test's TypeScript loader) that adds the time the request's headers arrived.
const ARRIVAL_STAMPER = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true });
const stamped = new Int32Array(workerData.stamped);
const server = http.createServer((req, res) => {
  const headers = { ...req.headers, '${ARRIVED_AT_HEADER}': String(Date.now()) };
  Atomics.add(stamped, 0, 1);
  const upstream = http.request({ host: '127.0.0.1', port: workerData.port, method: req.method, path: req.url, headers, agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  res.on('close', () => res.writableFinished || upstream.destroy());
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

export async function startFakeSes(opts: FakeSesOptions = {}): Promise<FakeSes> {
  let queued: { n: number; fault: FakeSesFault }[] = [];
  let rule: FakeSesRule | null = null;
  let random: { p: number; fault: FakeSesFault } | null = null;
  const pending = new Set<NodeJS.Timeout>();
  const stamped = new SharedArrayBuffer(4);

  const fake: FakeSes = {
    url: '',
    messages: [],
    sendCalls: 0,
    maxSendRate: 14,
    latencyMs: 0,
    acceptBeforeLatency: false,
    onAccept: null,
    failNext: (n, fault) => void queued.push({ n, fault }),
    setRule: (r) => void (rule = r),
    failWithProbability: (p, fault) => void (random = p > 0 ? { p, fault } : null),
    messagesTo: (address) =>
      fake.messages.filter((m) => [...m.destination.to, ...m.destination.cc, ...m.destination.bcc].includes(address)),
    stampedArrivals: () => Atomics.load(new Int32Array(stamped), 0),
    reset: () => {
      queued = [];
      rule = null;
      random = null;
      fake.messages.length = 0;
      fake.sendCalls = 0;
      fake.latencyMs = 0;
      fake.acceptBeforeLatency = false;
      fake.onAccept = null;
      fake.maxSendRate = 14;
    },
    close: async () => {
      await stamper?.terminate();
      for (const t of pending) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const later = (ms: number, fn: () => void) => {
    if (ms <= 0) return fn();
    const t = setTimeout(() => {
      pending.delete(t);
      fn();
    }, ms);
    pending.add(t);
  };

  const pickFault = (req: FakeSesSendRequest): FakeSesFault | undefined => {
    const head = queued[0];
    if (head) {
      head.n -= 1;
      if (head.n <= 0) queued.shift();
      return head.fault;
    }
    const byRule = rule?.(req);
    if (byRule) return byRule;
    if (random && Math.random() < random.p) return random.fault;
    return undefined;
  };

  const server = http.createServer((req, res) => {
    const arrivedAt = Number(req.headers[ARRIVED_AT_HEADER]) || Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const json = (status: number, payload: unknown, errorType?: string) => {
        if (res.destroyed) return;
        const headers: Record<string, string> = { 'content-type': 'application/json', 'x-amzn-requestid': randomBytes(8).toString('hex') };
        if (errorType) headers['x-amzn-errortype'] = errorType;
        res.writeHead(status, headers).end(JSON.stringify(payload));
      };
      const error = (status: number, name: string, message: string) => json(status, { __type: name, message }, name);

      if (req.method === 'GET' && req.url === ACCOUNT_PATH) {
        if (fake.maxSendRate === null) return error(404, 'NotFoundException', 'GetAccount is not available');
        return json(200, {
          ProductionAccessEnabled: true,
          SendingEnabled: true,
          EnforcementStatus: 'HEALTHY',
          SendQuota: { Max24HourSend: 50_000, MaxSendRate: fake.maxSendRate, SentLast24Hours: 0 },
        });
      }
      if (req.method !== 'POST' || req.url !== SEND_PATH) return error(404, 'NotFoundException', `no route ${req.method} ${req.url}`);

      let input: {
        Content?: { Raw?: { Data?: string } };
        Destination?: { ToAddresses?: string[]; CcAddresses?: string[]; BccAddresses?: string[] };
        ConfigurationSetName?: string;
        FromEmailAddress?: string;
      };
      try {
        input = JSON.parse(body);
      } catch {
        return error(400, 'BadRequestException', 'body is not JSON');
      }
      const data = input.Content?.Raw?.Data;
      if (!data) return error(400, 'BadRequestException', 'only Content.Raw is supported by the fake');
      fake.sendCalls += 1;
      const raw = Buffer.from(data, 'base64').toString('utf8');
      const destination = {
        to: input.Destination?.ToAddresses ?? [],
        cc: input.Destination?.CcAddresses ?? [],
        bcc: input.Destination?.BccAddresses ?? [],
      };
      const accept = () => {
        const messageId = `fake-${randomBytes(12).toString('hex')}`;
        const region = /Credential=[^/]+\/\d+\/([a-z0-9-]+)\//.exec(req.headers.authorization ?? '')?.[1];
        const message: FakeSesMessage = {
          messageId,
          raw,
          destination,
          configurationSetName: input.ConfigurationSetName,
          fromEmailAddress: input.FromEmailAddress,
          region,
          at: Date.now(),
          arrivedAt,
        };
        fake.messages.push(message);
        fake.onAccept?.(message);
        return messageId;
      };

      const fault = pickFault({ call: fake.sendCalls, raw, destination, configurationSetName: input.ConfigurationSetName });
      switch (fault?.kind) {
        case undefined: {
          if (!fake.acceptBeforeLatency) return later(fake.latencyMs, () => json(200, { MessageId: accept() }));
          const messageId = accept();
          return later(fake.latencyMs, () => json(200, { MessageId: messageId }));
        }
        case 'throttle':
          return error(fault.status ?? 400, 'ThrottlingException', 'Maximum sending rate exceeded.');
        case 'tooManyRequests':
          return error(429, 'TooManyRequestsException', 'Too many requests.');
        case 'serverError':
          return error(fault.status ?? 500, fault.name ?? 'InternalFailure', 'Internal failure.');
        case 'timeout': {
          const messageId = fault.accept ? accept() : undefined;
          return later(fault.delayMs, () => (messageId ? json(200, { MessageId: messageId }) : error(500, 'InternalFailure', 'late')));
        }
        case 'reject':
          return error(fault.status ?? 400, fault.name ?? 'MessageRejected', fault.message ?? 'Email address is not verified.');
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let stamper: Worker | null = null;
  if (opts.stampArrivalsOffThread) {
    stamper = new Worker(ARRIVAL_STAMPER, { eval: true, workerData: { port, stamped } });
    stamper.unref();
    const stamperPort = await new Promise<number>((resolve, reject) => {
      stamper!.once('message', resolve);
      stamper!.once('error', reject);
    });
    fake.url = `http://127.0.0.1:${stamperPort}`;
  } else {
    fake.url = `http://127.0.0.1:${port}`;
  }
  return fake;
}
