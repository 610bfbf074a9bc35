import type { EmailStatus } from '@mailrail/platform/db/generated/enums';
import { normaliseAddress } from '../emails/address';
import { decidingEvent, recipientOutcomes, type RecipientOutcome } from '../emails/recipient-outcomes';
import { explainEvent, explainSuppression, type Explanation } from './explanations';

// Each recipient's outcome with the explanation of the event that decided it: the email's
// `recipients` (GET /api/v1/emails/{id}, the email page) and the address page say the same thing.

export interface ExplainedOutcome extends RecipientOutcome {
  /** When the deciding event happened; null when none did (queued, or not sent). */
  statusAt: Date | null;
  explanation: Explanation | null;
}

interface Event {
  status: EmailStatus;
  data: unknown;
  createdAt: Date;
}

/** Every recipient of the email (recipientOutcomes), each explained; `events` oldest first. */
export function explainedRecipientOutcomes(email: Parameters<typeof recipientOutcomes>[0], events: Event[]): ExplainedOutcome[] {
  return recipientOutcomes(email, events).map((outcome) => {
    if (outcome.status === 'SUPPRESSED' && outcome.reason)
      return { ...outcome, statusAt: null, explanation: explainSuppression(outcome.reason) };
    const address = normaliseAddress(outcome.email);
    const event = decidingEvent(events, outcome.status, address);
    return { ...outcome, statusAt: event?.createdAt ?? null, explanation: event ? explainEvent(event.status, event.data, address) : null };
  });
}
