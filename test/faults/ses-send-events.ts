// Plays SES event publishing through Amazon SNS for a fault stack: every message the fake SES
// accepts gets its `Send` event (mail.messageId and our X-Usesend-Email-ID header), signed as SNS
// signs it and posted to the API's SES notification endpoint, a moment later, as production
// does. A post that fails is retried, as SNS retries an HTTP endpoint.
import path from 'node:path';
import {
  createTestSnsSigner,
  sesEventMessage,
  TEST_TOPIC_ARN,
  type TestSnsSigner,
} from '../../apps/api/src/ses-notifications/testing/sns-signer';
import type { FakeSesMessage } from '@mailrail/testing/fake-ses';
import { emailIdOf, sleep, type Stack } from './stack';

const DELAY_MS = { min: 100, max: 1000 }; // SES to SNS to us: usually well under a second
const IN_FLIGHT = 8; // SNS delivers to one endpoint over a few connections
const RETRY_MS = 1000;

export interface SendEventPublisher {
  /** Events posted and answered 200. */
  delivered(): number;
  /** Posts answered otherwise or not at all (each retried until it is delivered). */
  failedPosts(): number;
  /** Waits until every accepted message's event is delivered, or the timeout. */
  drain(timeoutMs: number): Promise<boolean>;
  stop(): void;
}

/** What startStack needs for the API to check the signatures: the env and the preload module. */
export async function snsForStack(): Promise<{ signer: TestSnsSigner; env: Record<string, string>; apiImports: string[] }> {
  const signer = await createTestSnsSigner();
  return {
    signer,
    env: { SNS_TOPIC_ARNS: TEST_TOPIC_ARN, FAULTS_SNS_CERT_URL: signer.certUrl, FAULTS_SNS_CERT_PEM: signer.certPem },
    apiImports: [path.join(__dirname, 'sns-certificate-preload.ts')],
  };
}

export function publishSendEvents(stack: Stack, signer: TestSnsSigner): SendEventPublisher {
  const due: { at: number; message: FakeSesMessage }[] = [];
  let delivered = 0;
  let failedPosts = 0;
  let active = 0;

  const post = async (m: FakeSesMessage): Promise<boolean> => {
    const envelope = signer.notification(
      sesEventMessage('Send', { sesMessageId: m.messageId, emailId: emailIdOf(m.raw), timestamp: new Date(m.at).toISOString() }),
    );
    try {
      const res = await fetch(`${stack.apiUrl}/api/ses/notifications`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
        body: JSON.stringify(envelope),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  };

  const pump = () => {
    while (active < IN_FLIGHT && due.length > 0 && due[0].at <= Date.now()) {
      const item = due.shift()!;
      active++;
      void post(item.message).then((ok) => {
        active--;
        if (ok) delivered++;
        else {
          failedPosts++;
          due.push({ at: Date.now() + RETRY_MS, message: item.message });
          due.sort((a, b) => a.at - b.at);
        }
        pump();
      });
    }
  };
  const timer = setInterval(pump, 20);
  timer.unref();

  stack.ses.onAccept = (message) => {
    const at = Date.now() + DELAY_MS.min + Math.random() * (DELAY_MS.max - DELAY_MS.min);
    // Mostly in order already: insert from the end.
    let i = due.length;
    while (i > 0 && due[i - 1].at > at) i--;
    due.splice(i, 0, { at, message });
  };

  return {
    delivered: () => delivered,
    failedPosts: () => failedPosts,
    drain: async (timeoutMs) => {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        if (due.length === 0 && active === 0) return true;
        await sleep(100);
      }
      return false;
    },
    stop: () => {
      clearInterval(timer);
      stack.ses.onAccept = null;
    },
  };
}
