import ipaddr from 'ipaddr.js';
import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import type { SmtpReply } from './replies';
import type { ClosedReason } from './smtp-metrics';

// What a connection may hold before and after it logs in. A client that never authenticates
// could otherwise keep a slot of SMTP_MAX_CLIENTS for ever (AUTH before STARTTLS every 20 s was
// answered 538 and reset the idle timeout): each client address has SMTP_MAX_CONNECTIONS_PER_IP
// connections, SMTP_AUTH_TIMEOUT_MS to authenticate, and every session SMTP_MAX_SESSION_MS.

type Connection = SMTPServer['connections'] extends Set<infer C> ? C : never;

/** AUTH commands before STARTTLS one connection may send before it is closed. */
export const AUTH_BEFORE_TLS_PER_CONNECTION = 3;

export interface SessionLimitsOptions {
  /** Connections per client network at once; 0 = no limit. */
  maxPerClient: number;
  authTimeoutMs: number;
  maxSessionMs: number;
  /** How long a session past its lifetime may still finish the message in flight (SMTP_SHUTDOWN_GRACE_MS). */
  graceMs: number;
  replies: {
    tooManyConnections: () => SmtpReply;
    authTimedOut: () => SmtpReply;
    tooManyAuthBeforeTls: () => SmtpReply;
    sessionLifetimeReached: () => SmtpReply;
  };
  /**
   * An AUTH refused with 538 because TLS was not started: counted as a failed authentication of
   * the client's address. Resolves with the reply that closes the connection when that address is
   * over its failure limit, else null.
   */
  countAuthBeforeTls(session: SMTPServerSession): Promise<SmtpReply | null>;
  /** Whether the session has a message in flight (MAIL FROM to the reply to DATA): it is not cut then. */
  isBusy(sessionId: string): boolean;
  onClosed(reason: ClosedReason): void;
  onError(err: unknown): void;
}

/**
 * The client network a connection counts against: its IPv4 address, or the /64 of an IPv6 one
 * (one subscriber's usual allocation, so that a host cannot step around the limit address by address).
 */
export function clientNetwork(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${ip.toString()}/64`).toString()}/64`;
}

interface Tracked {
  network: string;
  connection: Connection | undefined;
  authTimer: NodeJS.Timeout;
  lifetimeTimer: NodeJS.Timeout;
  expired: boolean;
  authBeforeTls: number;
}

export interface SessionLimits {
  /** onConnect: the reply that refuses the connection, or null when it is taken (and tracked until `closed`). */
  opened(session: SMTPServerSession, servers: readonly SMTPServer[]): SmtpReply | null;
  /** onAuth succeeded: the pre-authentication deadline no longer applies. */
  authenticated(session: SMTPServerSession): void;
  /** A message's reply was sent: a session past its lifetime is closed now. */
  transactionEnded(sessionId: string): void;
  /** onClose: true when the session had been taken by `opened`. */
  closed(session: SMTPServerSession): boolean;
}

export function createSessionLimits(opts: SessionLimitsOptions): SessionLimits {
  const perNetwork = new Map<string, number>();
  const sessions = new Map<string, Tracked>();

  const cut = (sessionId: string, reply: SmtpReply, reason: ClosedReason) => {
    const tracked = sessions.get(sessionId);
    const connection = tracked?.connection;
    if (!connection) return;
    tracked.connection = undefined;
    opts.onClosed(reason);
    // A 421 makes smtp-server close the connection once the reply is written.
    connection.send(reply.responseCode, reply.message);
  };

  /** Watches the replies smtp-server writes itself: its 538 to AUTH before STARTTLS never reaches onAuth. */
  const watchAuthBeforeTls = (connection: Connection, session: SMTPServerSession, tracked: Tracked) => {
    const send = connection.send.bind(connection);
    connection.send = (code, ...rest) => {
      send(code, ...rest);
      if (code !== 538) return;
      tracked.authBeforeTls++;
      opts.countAuthBeforeTls(session).then(
        (refusal) => {
          if (refusal) cut(session.id, refusal, 'auth-before-tls');
          else if (tracked.authBeforeTls >= AUTH_BEFORE_TLS_PER_CONNECTION)
            cut(session.id, opts.replies.tooManyAuthBeforeTls(), 'auth-before-tls');
        },
        (err: unknown) => opts.onError(err),
      );
    };
  };

  return {
    opened(session, servers) {
      const network = clientNetwork(session.remoteAddress);
      const count = perNetwork.get(network) ?? 0;
      if (opts.maxPerClient && count >= opts.maxPerClient) {
        opts.onClosed('per-ip-limit');
        return opts.replies.tooManyConnections();
      }
      perNetwork.set(network, count + 1);
      // The session object is the connection's for its whole life (smtp-server resets it in place).
      let connection: Connection | undefined;
      for (const server of servers) {
        for (const c of server.connections) if (c.session === session) connection = c;
      }
      const tracked: Tracked = {
        network,
        connection,
        expired: false,
        authBeforeTls: 0,
        authTimer: setTimeout(() => {
          if (!session.user) cut(session.id, opts.replies.authTimedOut(), 'auth-timeout');
        }, opts.authTimeoutMs).unref(),
        lifetimeTimer: setTimeout(() => {
          tracked.expired = true;
          if (!opts.isBusy(session.id)) return cut(session.id, opts.replies.sessionLifetimeReached(), 'session-lifetime');
          // A message in flight gets its reply first (transactionEnded), within the grace a stop gives it.
          tracked.lifetimeTimer = setTimeout(
            () => cut(session.id, opts.replies.sessionLifetimeReached(), 'session-lifetime'),
            opts.graceMs,
          ).unref();
        }, opts.maxSessionMs).unref(),
      };
      sessions.set(session.id, tracked);
      if (connection) watchAuthBeforeTls(connection, session, tracked);
      return null;
    },
    authenticated(session) {
      const tracked = sessions.get(session.id);
      if (tracked) clearTimeout(tracked.authTimer);
    },
    transactionEnded(sessionId) {
      const tracked = sessions.get(sessionId);
      // After the reply just sent: the client reads it, then the 421.
      if (tracked?.expired) setImmediate(() => cut(sessionId, opts.replies.sessionLifetimeReached(), 'session-lifetime'));
    },
    closed(session) {
      const tracked = sessions.get(session.id);
      if (!tracked) return false;
      sessions.delete(session.id);
      clearTimeout(tracked.authTimer);
      clearTimeout(tracked.lifetimeTimer);
      const left = (perNetwork.get(tracked.network) ?? 1) - 1;
      if (left > 0) perNetwork.set(tracked.network, left);
      else perNetwork.delete(tracked.network);
      return true;
    },
  };
}
