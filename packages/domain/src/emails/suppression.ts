import { bareAddress } from './address';
import type { EmailDraft } from './create-emails';

export const ALL_TO_SUPPRESSED = 'All TO recipients are suppressed. No emails to send.';

// A recipient may be `Name <addr>`: suppressions are kept by bare, lower-cased address.
const normalise = (recipient: string) => bareAddress(recipient).toLowerCase();

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
      const pair = { teamId: d.teamId, email: normalise(recipient) };
      unique.set(suppressionKey(pair), pair);
    }
  }
  return [...unique.values()];
}

/**
 * useSend's rule (docs/emails.md, "Suppressed recipients"), given the suppressed pairs: when every
 * TO address is suppressed the email is kept as SUPPRESSED and never sent; otherwise suppressed
 * to, cc and bcc addresses are silently dropped.
 */
export function withSuppressions(drafts: EmailDraft[], suppressed: Set<string>): EmailDraft[] {
  if (suppressed.size === 0) return drafts;
  return drafts.map((d) => {
    const keep = (list: string[] | undefined) =>
      list?.filter((a) => !suppressed.has(suppressionKey({ teamId: d.teamId, email: normalise(a) })));
    const to = keep(d.to)!;
    if (to.length === 0) return { ...d, suppressed: { reason: ALL_TO_SUPPRESSED } };
    return { ...d, to, cc: keep(d.cc), bcc: keep(d.bcc) };
  });
}
