import { randomUUID } from 'node:crypto';
import {
  decodeEncodedWords,
  mimeHeaders,
  SES_SIMULATOR_DOMAIN,
  simulatedOutcome,
  simulatedSendEvents,
  simulatedSesEventJob,
  type SimulatedMessage,
} from '@mailrail/domain/ses-events/event-simulator';
import { type Logger } from '@mailrail/platform/log/logger';
import type { Queue } from 'bullmq';
import type { RawEmailToSend, SesSender } from './ses-sender';

// The SES port for the local emulator with the event simulator on (chosen in deps.ts): each
// message the emulator accepts also gets the events SES would publish, queued on the SES event
// queue the SNS intake feeds (see packages/domain/src/ses-events/event-simulator.ts).

export interface SimulatedEventsOptions {
  /** `queueNames.sesEvents`. */
  sesEventsQueue: Pick<Queue, 'addBulk'>;
  delayMs: number;
  log: Logger;
  now?: () => Date;
}

export function withSimulatedSesEvents(inner: SesSender, opts: SimulatedEventsOptions): SesSender {
  const now = opts.now ?? (() => new Date());
  return {
    ...inner,
    async sendRawEmail(email) {
      const sent = await inner.sendRawEmail(email);
      if (!sent.sent) return sent;
      const headers = mimeHeaders(email.raw);
      const header = (name: string) => headers.find((h) => h.name.toLowerCase() === name)?.value ?? '';
      const message: SimulatedMessage = {
        messageId: sent.messageId,
        source: header('from'),
        destination: email.destination,
        headers,
        subject: decodeEncodedWords(header('subject')),
        region: email.region,
        configurationSetName: email.configurationSetName,
        sentAt: now(),
      };
      try {
        await opts.sesEventsQueue.addBulk(simulatedSendEvents(message, opts.delayMs).map(simulatedSesEventJob));
      } catch (err) {
        // The message is sent: failing here would make the worker send it again.
        opts.log.warn({ err, messageId: sent.messageId }, 'simulated SES events could not be queued');
      }
      await sendOutOfOfficeReplies(inner, email, message, opts.log);
      return sent;
    },
  };
}

/** ooto@ answers like a mailbox on holiday: an auto-reply to the sender, visible in the emulator. */
async function sendOutOfOfficeReplies(inner: SesSender, email: RawEmailToSend, m: SimulatedMessage, log: Logger): Promise<void> {
  const all = [...email.destination.to, ...email.destination.cc, ...email.destination.bcc];
  for (const address of all.filter((a) => simulatedOutcome(a) === 'ooto')) {
    const raw = Buffer.from(
      [
        `From: ${address}`,
        `To: ${m.source}`,
        `Subject: Out of office: ${m.subject.replace(/[\r\n]/g, ' ')}`,
        `Message-ID: <${randomUUID()}@${SES_SIMULATOR_DOMAIN}>`,
        'Auto-Submitted: auto-replied',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'I am out of the office (a reply of the SES event simulator).',
        '',
      ].join('\r\n'),
    );
    try {
      await inner.sendRawEmail({ region: email.region, raw, destination: { to: [m.source], cc: [], bcc: [] } });
    } catch (err) {
      log.warn({ err, messageId: m.messageId }, 'simulated out-of-office reply could not be stored');
    }
  }
}
