import { GetAccountCommand, SendEmailCommand, type SendEmailCommandInput, type SESv2Client } from '@aws-sdk/client-sesv2';
import { createSesClient } from '@mailrail/platform/ses/client';
import { type Config } from '@mailrail/platform/config/schema';

// The port between the send pipeline and SES: two calls, one real adapter (SES v2 over HTTP,
// pointed at AWS, the local emulator or the tests' fake by SES_ENDPOINT).

export interface RawEmailToSend {
  region: string;
  /** Complete MIME message; SES takes headers and body from it. */
  raw: Buffer;
  /**
   * The bare From address the email's team was checked for. SES takes it as the sending identity
   * instead of reading one from the message (the client's own MIME, for SMTP mail).
   */
  fromEmailAddress?: string;
  /** Envelope recipients: bcc travels only here, never in a header. */
  destination: { to: string[]; cc: string[]; bcc: string[] };
  configurationSetName?: string;
  /**
   * Epoch ms after which the call must not start: the sender's claim on the email would no longer
   * outlast it (send-email.ts). A later start answers 'claim-running-out', SES never called.
   */
  startBy?: number;
  /**
   * Epoch ms after which the request must not leave: it would reach SES late for its rate slot and
   * bunch up with the next slot's message (send-pacing.ts). A later dispatch answers
   * 'late-for-slot', SES never called.
   */
  leaveBy?: number;
}

/** What a call answers when SES answered, or when the call did not leave (SES errors are thrown as the SDK's). */
export type SesSendAnswer =
  | { sent: true; messageId: string }
  /** Not sent: the claim on the email would end before SES answered (startBy passed). */
  | { sent: false; reason: 'claim-running-out' }
  /** Not sent: the request would leave after leaveBy, late for its rate slot. */
  | { sent: false; reason: 'late-for-slot' };

/**
 * How the dispatch guard refuses from inside the SDK's middleware stack, which can only resolve
 * with a response or reject; sendRawEmail turns it into its answer, so it never leaves this module.
 */
class NotDispatched extends Error {
  constructor(readonly reason: 'claim-running-out' | 'late-for-slot') {
    super(reason);
  }
}

/** The deadlines of the calls in progress, by their command's input (the object the middleware sees). */
type Deadlines = Pick<RawEmailToSend, 'startBy' | 'leaveBy'>;
const callDeadlines = new WeakMap<object, Deadlines>();

/**
 * Checks a call's deadlines (startBy, leaveBy) at the last step before the SDK writes the request.
 * Checked when the call starts instead, they missed the SDK's own steps (serialising, signing,
 * between awaits), which in a busy process take tens of ms: enough for a paced message to reach
 * SES together with the next slot's. One middleware on the client, not one per command: the
 * client resolves its middleware stack once (cacheMiddleware), which a per-command middleware
 * would defeat, and each call's deadlines are found by its input. The client makes one attempt
 * (createSesClient); should the SDK ever retry, the retry follows an attempt that may have reached
 * SES, so only the first is checked (the entry is taken out).
 */
function addDispatchGuard(client: SESv2Client): void {
  client.middlewareStack.add(
    (next) => (args) => {
      const deadlines = callDeadlines.get(args.input as object);
      if (!deadlines) return next(args);
      callDeadlines.delete(args.input as object);
      // Checked and handed to the HTTP handler in a process.nextTick callback, which runs once the
      // queue of promise continuations is empty: Node writes a request to its socket only then (its
      // socket is given on the next tick), and in a busy worker that queue (the other sends'
      // signing, database answers) can hold a request checked from a continuation for tens of ms. The handler's steps up to the write run synchronously in this callback,
      // and the socket's tick follows it before any continuation.
      return new Promise((resolve, reject) => {
        process.nextTick(() => {
          const now = Date.now();
          if (deadlines.startBy !== undefined && now > deadlines.startBy) return reject(new NotDispatched('claim-running-out'));
          if (deadlines.leaveBy !== undefined && now > deadlines.leaveBy) return reject(new NotDispatched('late-for-slot'));
          // A throw here would escape the tick as an uncaught exception; the async middleware
          // before it turned one into a rejection of the call.
          try {
            next(args).then(resolve, reject);
          } catch (err) {
            reject(err);
          }
        });
      });
    },
    // The innermost middleware: after signing and the retry loop, right before the HTTP handler.
    { step: 'deserialize', priority: 'low', name: 'mailrailDispatchGuard' },
  );
}

export interface SesSender {
  /** Answers SES's message id once SES accepted the message, or why the call did not leave; throws SDK errors as is. */
  sendRawEmail(email: RawEmailToSend): Promise<SesSendAnswer>;
  /** SendQuota.MaxSendRate of the account in a region, or null when SES does not say. */
  getMaxSendRate(region: string): Promise<number | null>;
  close(): void;
}

export function createSesV2Sender(config: Pick<Config, 'SES_ENDPOINT' | 'SES_TIMEOUT_MS' | 'SEND_CONCURRENCY'>): SesSender {
  const clients = new Map<string, SESv2Client>();
  const client = (region: string) => {
    let c = clients.get(region);
    if (!c) {
      // Two lanes per region share the client: enough sockets for both. The middleware stack is
      // resolved once (cacheMiddleware), not on every call: per call it costs CPU, and the objects
      // it builds live as long as the call, long enough to be promoted (docs/worker.md).
      c = createSesClient(config, region, {
        timeoutMs: config.SES_TIMEOUT_MS,
        maxSockets: config.SEND_CONCURRENCY * 2,
        cacheMiddleware: true,
      });
      addDispatchGuard(c);
      clients.set(region, c);
    }
    return c;
  };
  return {
    async sendRawEmail(email) {
      const input: SendEmailCommandInput = {
        Content: { Raw: { Data: email.raw } },
        FromEmailAddress: email.fromEmailAddress,
        Destination: {
          ToAddresses: email.destination.to,
          CcAddresses: email.destination.cc,
          BccAddresses: email.destination.bcc,
        },
        ConfigurationSetName: email.configurationSetName,
      };
      // A send waits for its call slot and rate permit after the claim, and a stalled process can
      // wait longer than the claim lasts or than its slot allows: checked as the request leaves.
      if (email.startBy !== undefined || email.leaveBy !== undefined) {
        callDeadlines.set(input, { startBy: email.startBy, leaveBy: email.leaveBy });
      }
      let messageId: string | undefined;
      try {
        messageId = (await client(email.region).send(new SendEmailCommand(input))).MessageId;
      } catch (err) {
        if (err instanceof NotDispatched) return { sent: false, reason: err.reason };
        throw err;
      }
      if (!messageId) throw new Error('SES answered without a MessageId');
      return { sent: true, messageId };
    },
    async getMaxSendRate(region) {
      try {
        const account = await client(region).send(new GetAccountCommand({}));
        const rate = account.SendQuota?.MaxSendRate;
        return rate && rate > 0 ? rate : null;
      } catch {
        // The local emulator does not implement GetAccount; the caller falls back to a default.
        return null;
      }
    },
    close() {
      for (const c of clients.values()) c.destroy();
      clients.clear();
    },
  };
}
