import { Counter, Gauge, Histogram } from 'prom-client';
import { createMetrics } from '@mailrail/platform/metrics/metrics';

/** How a message transaction ended at MAIL FROM or DATA (the label of mailrail_smtp_messages_total). */
export type MessageOutcome =
  'accepted' | 'sender-refused' | 'too-large' | 'over-budget' | 'rate-limited' | 'invalid-message' | 'temporary-failure';

/** Why the relay closed a connection itself (the label of mailrail_smtp_connections_closed_total). */
export type ClosedReason = 'per-ip-limit' | 'auth-timeout' | 'auth-before-tls' | 'session-lifetime';

/** The relay's Prometheus series: the common process ones (auth failures among them) plus its own. */
export function createSmtpMetrics() {
  const base = createMetrics('smtp');
  const registers = [base.registry];
  return {
    ...base,
    connections: new Counter({
      name: 'mailrail_smtp_connections_total',
      help: 'SMTP connections accepted, by port kind (starttls, tls)',
      labelNames: ['port'],
      registers,
    }),
    openConnections: new Gauge({ name: 'mailrail_smtp_open_connections', help: 'SMTP connections open now', registers }),
    connectionsClosed: new Counter({
      name: 'mailrail_smtp_connections_closed_total',
      help: 'SMTP connections the relay refused or closed with 421, by reason (per-ip-limit, auth-timeout, auth-before-tls, session-lifetime)',
      labelNames: ['reason'],
      registers,
    }),
    dataBytesInFlight: new Gauge({
      name: 'mailrail_smtp_data_bytes_in_flight',
      help: 'Bytes of SMTP messages held in memory now (received, not yet answered); bounded by SMTP_DATA_BUDGET_MB',
      registers,
    }),
    messages: new Counter({
      name: 'mailrail_smtp_messages_total',
      help: 'SMTP message transactions ended by the reply to MAIL FROM or DATA, by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    recipientsRefused: new Counter({
      name: 'mailrail_smtp_recipients_refused_total',
      help: 'RCPT TO refused, by reason (invalid-address, too-many)',
      labelNames: ['reason'],
      registers,
    }),
    bytes: new Counter({
      name: 'mailrail_smtp_received_bytes_total',
      help: 'Bytes of message data received (DATA), accepted or not',
      registers,
    }),
    dataReply: new Histogram({
      name: 'mailrail_smtp_data_reply_seconds',
      help: "Time from the end of a message's DATA to the relay's reply, by outcome",
      labelNames: ['outcome'],
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
  };
}

export type SmtpMetrics = ReturnType<typeof createSmtpMetrics>;
