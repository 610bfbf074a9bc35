import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { isUnavailable } from '@mailrail/domain/errors/unavailable';
import { maxMessageBytes } from '@mailrail/domain/emails/email-intake';
import { redactRequestBody } from '@mailrail/domain/request-log/redact-body';
import type { AuthContext } from '@mailrail/domain/teams/api-key-auth';
import { acceptMessage, toSmtpReply } from './accept-message';
import { authenticate } from './authenticate';
import type { SmtpDeps } from './deps';
import { createDataBudget, type MessageHold } from './data-budget';
import { checkEnvelopeSender, checkRecipient } from './envelope';
import { reply, SmtpReply } from './replies';
import { createSessionLimits } from './session-limits';
import type { MessageOutcome } from './smtp-metrics';

// The relay's two listeners (STARTTLS and implicit TLS) over one set of handlers. Each SMTP
// command is answered as early as it can be (AUTH, MAIL FROM, RCPT TO), and the message itself
// at the end of DATA, after it is committed. Stopping: no new connections, 421 to new commands
// and to idle connections, while messages in flight finish and get their answer. What one client
// or team may hold is bounded: connections per client address, time to log in, session lifetime
// (session-limits.ts), and the message bytes held in memory per team and per process (data-budget.ts).

export interface TlsFiles {
  cert: string | Buffer;
  key: string | Buffer;
}

export interface SmtpRelayOptions {
  host: string;
  /** 0 picks a free port (tests); a port that is null is not opened. */
  starttlsPort: number | null;
  tlsPort: number | null;
  tls: TlsFiles;
  /** Greeting and EHLO name. */
  serverName?: string;
}

export interface SmtpRelay {
  /** The ports actually listened on. */
  ports: { starttls: number | null; tls: number | null };
  /** New certificate for new TLS sessions (SIGHUP); sessions already open keep theirs. */
  reloadTls(tls: TlsFiles): void;
  /** Sessions with a message in flight (MAIL FROM until the reply to DATA). */
  busySessions(): number;
  /** Stops listening, refuses new commands with 421, waits for messages in flight (at most `graceMs`). */
  stop(graceMs: number): Promise<void>;
}

type Session = SMTPServerSession & { user?: AuthContext };

export async function startSmtpRelay(deps: SmtpDeps, opts: SmtpRelayOptions): Promise<SmtpRelay> {
  const { config, metrics, log } = deps;
  const maxBytes = maxMessageBytes(config);
  const busy = new Set<string>();
  let stopping = false;
  const servers: SMTPServer[] = [];

  const limits = createSessionLimits({
    maxPerClient: config.SMTP_MAX_CONNECTIONS_PER_IP,
    authTimeoutMs: config.SMTP_AUTH_TIMEOUT_MS,
    maxSessionMs: config.SMTP_MAX_SESSION_MS,
    graceMs: config.SMTP_SHUTDOWN_GRACE_MS,
    replies: {
      tooManyConnections: () => reply.tooManyConnections(config.SMTP_MAX_CONNECTIONS_PER_IP),
      authTimedOut: () => reply.authTimedOut(config.SMTP_AUTH_TIMEOUT_MS),
      tooManyAuthBeforeTls: reply.tooManyAuthBeforeTls,
      sessionLifetimeReached: reply.sessionLifetimeReached,
    },
    async countAuthBeforeTls(session) {
      metrics.authFailures.inc({ reason: 'auth-before-tls' });
      const attempt = await deps.authFailures.reserve(session.remoteAddress);
      return attempt.refusedFor ? reply.tooManyAuthFailures(attempt.refusedFor) : null;
    },
    isBusy: (sessionId) => busy.has(sessionId),
    onClosed: (reason) => metrics.connectionsClosed.inc({ reason }),
    onError: (err) => log.warn({ err }, 'smtp: AUTH before STARTTLS could not be counted'),
  });
  // Every message's memory is counted; a team's bound is at least one message of the largest size.
  const teamBytes = Math.max(config.SMTP_DATA_TEAM_BUDGET_MB * 1024 * 1024, maxBytes);
  const budget = createDataBudget(
    {
      processBytes: Math.max(config.SMTP_DATA_BUDGET_MB * 1024 * 1024, teamBytes),
      teamBytes,
      teamMessages: config.SMTP_DATA_CONCURRENCY_PER_TEAM,
    },
    (bytes) => metrics.dataBytesInFlight.set(bytes),
  );

  // Each message transaction is one entry of the team's request log: from MAIL FROM to the answer
  // that ended it (a refused MAIL FROM, or the reply to DATA).
  const transactions = new Map<string, { started: number; createdAt: Date; from: string }>();
  const finish = (session: Session, outcome: MessageOutcome, stage: 'MAIL' | 'DATA', refusal: SmtpReply | null, emailId?: string) => {
    metrics.messages.inc({ outcome });
    busy.delete(session.id);
    limits.transactionEnded(session.id);
    const transaction = transactions.get(session.id);
    transactions.delete(session.id);
    if (!session.user || !transaction) return;
    deps.requestLog.record({
      teamId: session.user.teamId,
      apiKeyId: session.user.apiKeyId,
      source: 'smtp',
      method: stage,
      path: `/smtp/${stage}`,
      status: refusal ? refusal.responseCode : 250,
      errorCode: refusal ? outcome : null,
      errorMessage: refusal ? refusal.message : null,
      durationMs: performance.now() - transaction.started,
      requestBody: redactRequestBody({
        from: transaction.from,
        to: session.envelope.rcptTo.map((r) => r.address),
        ...(emailId ? { emailId } : {}),
      }),
      createdAt: transaction.createdAt,
    });
  };

  const handlers: Partial<SMTPServerOptions> = {
    onConnect(session, callback) {
      if (stopping) return callback(new SmtpReply(421, '4.3.2', 'Server shutting down, try again'));
      const refused = limits.opened(session, servers);
      if (refused) return callback(refused);
      metrics.openConnections.inc();
      callback();
    },
    onAuth(auth, session, callback) {
      authenticate(deps, auth, session, { allowInsecureAuth: config.SMTP_ALLOW_INSECURE_AUTH }).then(
        (user) => {
          limits.authenticated(session);
          callback(null, { user });
        },
        (err: SmtpReply) => callback(err),
      );
    },
    onMailFrom(address, session: Session, callback) {
      // smtp-server answers 530 itself before this; kept so a change of its options cannot open the relay.
      if (!session.user) return callback(new SmtpReply(530, '5.7.0', 'Authentication required'));
      busy.add(session.id);
      transactions.set(session.id, { started: performance.now(), createdAt: new Date(), from: address.address });
      // A message whose declared SIZE cannot be held now is refused before it is sent.
      const declared = Number(address.args && (address.args as Record<string, string>).SIZE) || 0;
      const overBudget = budget.refusalFor(session.user.teamId, declared);
      if (overBudget) {
        const refusal = reply.overBudget(overBudget);
        finish(session, refusal.outcome, 'MAIL', refusal);
        return callback(refusal);
      }
      checkEnvelopeSender(deps, session.user!, address).then(
        () => callback(),
        (err) => {
          logUnexpected(err, session, 'MAIL FROM');
          const refusal = toSmtpReply(err);
          finish(session, refusal.outcome, 'MAIL', refusal);
          callback(refusal);
        },
      );
    },
    onRcptTo(address, session: Session, callback) {
      try {
        checkRecipient(address, session);
        callback();
      } catch (err) {
        const refusal = err as SmtpReply;
        metrics.recipientsRefused.inc({ reason: refusal.responseCode === 452 ? 'too-many' : 'invalid-address' });
        callback(refusal);
      }
    },
    onData(stream: SMTPServerDataStream, session: Session, callback) {
      const chunks: Buffer[] = [];
      // smtp-server has sent 354 before this runs: a message that cannot be held is drained, never kept, and answered 452.
      const place = budget.open(session.user!.teamId);
      let hold: MessageHold | null = 'refused' in place ? null : place;
      let overBudget = 'refused' in place ? place.refused : null;
      const release = () => {
        hold?.release();
        hold = null;
        chunks.length = 0;
      };
      stream.on('data', (chunk: Buffer) => {
        // Past the limit the rest is only drained, never kept.
        if (stream.sizeExceeded || !hold) return;
        if (hold.add(chunk.length)) chunks.push(chunk);
        else {
          overBudget = "the message would pass this team's or the relay's budget of message bytes in flight";
          release();
        }
      });
      stream.on('error', () => {
        // The client left mid-message: nothing to store.
        release();
        busy.delete(session.id);
      });
      stream.on('end', () => {
        const started = performance.now();
        metrics.bytes.inc(stream.byteLength);
        const answer = (outcome: MessageOutcome, err: SmtpReply | null, emailId?: string) => {
          release();
          metrics.dataReply.observe({ outcome }, (performance.now() - started) / 1000);
          finish(session, outcome, 'DATA', err, emailId);
          callback(err, emailId ? reply.accepted(emailId) : undefined);
          if (stopping) setImmediate(closeIdle);
        };
        if (stream.sizeExceeded) return answer('too-large', reply.tooLarge(maxBytes));
        if (overBudget) return answer('over-budget', reply.overBudget(overBudget));
        const recipients = session.envelope.rcptTo.map((r) => r.address);
        acceptMessage(deps, session.user!, session, Buffer.concat(chunks), { recipients }).then(
          (emailId) => {
            log.info(
              { emailId, teamId: session.user!.teamId, session: session.id, bytes: stream.byteLength, recipients: recipients.length },
              'smtp message accepted',
            );
            answer('accepted', null, emailId);
          },
          (err) => {
            logUnexpected(err, session, 'DATA');
            const refusal = toSmtpReply(err);
            answer(refusal.outcome, refusal);
          },
        );
      });
    },
    onClose(session: Session) {
      busy.delete(session.id);
      transactions.delete(session.id);
      // Only a connection onConnect took was counted open.
      if (limits.closed(session)) metrics.openConnections.dec();
    },
  };

  /** Failures that are not a refusal of ours (a database down, a bug) are logged; the client gets a 451 and retries. */
  function logUnexpected(err: unknown, session: Session, stage: string): void {
    if (err instanceof SmtpReply || err instanceof ApiError) return;
    if (isUnavailable(err)) log.warn({ err, session: session.id, stage }, 'smtp: PostgreSQL or Redis unavailable');
    else log.error({ err, session: session.id, stage }, 'smtp: unexpected error');
  }

  const common: SMTPServerOptions = {
    name: opts.serverName ?? os.hostname(),
    banner: 'mailrail',
    key: opts.tls.key,
    cert: opts.tls.cert,
    size: maxBytes,
    authMethods: ['PLAIN', 'LOGIN'],
    authRequiredMessage: reply.authRequired,
    allowInsecureAuth: config.SMTP_ALLOW_INSECURE_AUTH,
    disableReverseLookup: true,
    maxClients: config.SMTP_MAX_CLIENTS,
    closeTimeout: config.SMTP_SHUTDOWN_GRACE_MS,
    logger: false,
    ...handlers,
  };
  const listen = async (port: number | null, secure: boolean): Promise<number | null> => {
    if (port === null) return null;
    const server = new SMTPServer({ ...common, secure });
    // smtp-server marks what is not worth reporting (a TCP health check closing before TLS...).
    server.on('error', (err) =>
      (err as { report?: boolean }).report === false
        ? log.debug({ err }, 'smtp connection closed early')
        : log.warn({ err }, 'smtp connection error'),
    );
    server.on('connect', () => metrics.connections.inc({ port: secure ? 'tls' : 'starttls' }));
    servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(port, opts.host, () => resolve());
    });
    return (server.server.address() as AddressInfo).port;
  };
  const ports = { starttls: await listen(opts.starttlsPort, false), tls: await listen(opts.tlsPort, true) };

  /** While stopping: connections with no message in flight are told 421 and closed at once. */
  function closeIdle() {
    for (const server of servers) {
      for (const connection of server.connections) {
        if (busy.has(connection.session.id)) continue;
        connection.send(421, reply.shuttingDown);
      }
    }
  }

  return {
    ports,
    reloadTls(tls) {
      for (const server of servers) server.updateSecureContext({ key: tls.key, cert: tls.cert });
    },
    busySessions: () => busy.size,
    async stop(graceMs) {
      stopping = true;
      const closed = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
      closeIdle();
      const deadline = Date.now() + graceMs;
      while (busy.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
    },
  };
}
