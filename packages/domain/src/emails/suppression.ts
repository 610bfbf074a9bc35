import { normaliseAddress } from './address';
import type { SuppressionReason } from '@mailrail/platform/db/generated/enums';
import type { EmailDraft } from './create-emails';
import type { SkippedRecipient } from './recipient-outcomes';

export const ALL_TO_SUPPRESSED = 'All TO recipients are suppressed. No emails to send.';

/** A recipient of a team, as the suppression list is searched: the address bare and lower-cased. */
export interface SuppressionPair {
  teamId: number;
  email: string;
}

/** How a suppressed pair is named in the sets below. */
export const suppressionKey = (p: SuppressionPair): string => `${p.teamId}:${p.email}`;

/** Every distinct (team, address) pair among the drafts' to, cc and bcc recipients. */
export function suppressionLookup(drafts: EmailDraft[]): SuppressionPair[] {
  const unique = new Map<string, SuppressionPair>();
  for (const d of drafts) {
    for (const recipient of [...d.to, ...(d.cc ?? []), ...(d.bcc ?? [])]) {
      const pair = { teamId: d.teamId, email: normaliseAddress(recipient) };
      unique.set(suppressionKey(pair), pair);
    }
  }
  return [...unique.values()];
}

/** A suppressed (team, address) pair as the suppression list answers it, with why it is there. */
export interface SuppressedPair extends SuppressionPair {
  reason: SuppressionReason;
}

/**
 * useSend's rule (docs/emails.md, "Suppressed recipients"), given the suppressed pairs: when every
 * TO address is suppressed the email is kept as SUPPRESSED and never sent; otherwise suppressed
 * to, cc and bcc addresses are dropped. Either way each suppressed address is kept on the draft
 * (`skippedRecipients`) with its reason, so the email says who was not sent to and why.
 */
export function withSuppressions(drafts: EmailDraft[], suppressed: SuppressedPair[]): EmailDraft[] {
  if (suppressed.length === 0) return drafts;
  const reasons = new Map(suppressed.map((p) => [suppressionKey(p), p.reason]));
  return drafts.map((d) => {
    const skipped: SkippedRecipient[] = [];
    const keep = (list: string[] | undefined, type: SkippedRecipient['type']) =>
      list?.filter((address) => {
        const reason = reasons.get(suppressionKey({ teamId: d.teamId, email: normaliseAddress(address) }));
        if (reason) skipped.push({ email: address, type, status: 'SUPPRESSED', reason });
        return !reason;
      });
    const to = keep(d.to, 'to')!;
    const cc = keep(d.cc, 'cc');
    const bcc = keep(d.bcc, 'bcc');
    const skippedRecipients = skipped.length ? skipped : null;
    if (to.length === 0) return { ...d, suppressed: { reason: ALL_TO_SUPPRESSED }, skippedRecipients };
    return { ...d, to, cc, bcc, skippedRecipients };
  });
}
