import { GetAccountCommand, SendEmailCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import { createSesClient } from '@mailrail/platform/ses/client';
import { type Config } from '@mailrail/platform/config/schema';

// The port between the send pipeline and SES: two calls, one real adapter (SES v2 over HTTP,
// pointed at AWS, the local emulator or the tests' fake by SES_ENDPOINT).

export interface RawEmailToSend {
  region: string;
  /** Complete MIME message; SES takes headers and body from it. */
  raw: Buffer;
  /** Envelope recipients: bcc travels only here, never in a header. */
  destination: { to: string[]; cc: string[]; bcc: string[] };
  configurationSetName?: string;
  /**
   * Epoch ms after which the call must not start: the sender's claim on the email would no longer
   * outlast it (send-email.ts). A later start throws a CLAIM_RUNNING_OUT error, SES never called.
   */
  startBy?: number;
}

export const CLAIM_RUNNING_OUT = 'ClaimRunningOut';

export function claimRunningOut(): Error {
  return Object.assign(new Error('the claim on the email would end before SES answered'), { name: CLAIM_RUNNING_OUT });
}

export interface SesSender {
  /** Resolves with the SES message id once SES accepted the message; throws SDK errors as is. */
  sendRawEmail(email: RawEmailToSend): Promise<{ messageId: string }>;
  /** SendQuota.MaxSendRate of the account in a region, or null when SES does not say. */
  getMaxSendRate(region: string): Promise<number | null>;
  close(): void;
}

export function createSesV2Sender(config: Pick<Config, 'SES_ENDPOINT' | 'SES_TIMEOUT_MS' | 'SEND_CONCURRENCY'>): SesSender {
  const clients = new Map<string, SESv2Client>();
  const client = (region: string) => {
    let c = clients.get(region);
    if (!c) {
      // Two lanes per region share the client: enough sockets for both.
      c = createSesClient(config, region, { timeoutMs: config.SES_TIMEOUT_MS, maxSockets: config.SEND_CONCURRENCY * 2 });
      clients.set(region, c);
    }
    return c;
  };
  return {
    async sendRawEmail(email) {
      // Checked here, right before the request: a send waits for its call slot and rate permit
      // after the claim, and a stalled process can wait longer than the claim lasts.
      if (email.startBy !== undefined && Date.now() > email.startBy) throw claimRunningOut();
      const out = await client(email.region).send(
        new SendEmailCommand({
          Content: { Raw: { Data: email.raw } },
          Destination: {
            ToAddresses: email.destination.to,
            CcAddresses: email.destination.cc,
            BccAddresses: email.destination.bcc,
          },
          ConfigurationSetName: email.configurationSetName,
        }),
      );
      if (!out.MessageId) throw new Error('SES answered without a MessageId');
      return { messageId: out.MessageId };
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
