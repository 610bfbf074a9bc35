import type { NamedStatement, SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { bareAddress } from './address';
import type { EmailDraft } from './create-emails';

export const ALL_TO_SUPPRESSED = 'All TO recipients are suppressed. No emails to send.';

// A recipient may be `Name <addr>`: suppressions are kept by bare, lower-cased address.
const normalise = (recipient: string) => bareAddress(recipient).toLowerCase();

const FIND_SUPPRESSED: NamedStatement = {
  name: 'mailrail_find_suppressed',
  text: `SELECT s."teamId", s.email FROM "Suppression" s
     JOIN json_to_recordset($1::json) AS x("teamId" int, email text) ON s."teamId" = x."teamId" AND s.email = x.email`,
};

/** Suppressed addresses among the given (team, address) pairs, in one query whatever the count. */
export async function findSuppressed(sql: SqlExecutor, pairs: { teamId: number; email: string }[]): Promise<Set<string>> {
  const unique = new Map<string, { teamId: number; email: string }>();
  for (const p of pairs) {
    const email = normalise(p.email);
    unique.set(`${p.teamId}:${email}`, { teamId: p.teamId, email });
  }
  if (unique.size === 0) return new Set();
  const rows = await sql.query<{ teamId: number; email: string }>(FIND_SUPPRESSED, [JSON.stringify([...unique.values()])]);
  return new Set(rows.map((r) => `${r.teamId}:${r.email}`));
}

/**
 * useSend's rule (docs/emails.md, "Suppressed recipients"): when every TO address is suppressed
 * the email is kept as SUPPRESSED and never sent; otherwise suppressed to, cc and bcc addresses
 * are silently dropped.
 */
export async function applySuppressions(sql: SqlExecutor, drafts: EmailDraft[]): Promise<EmailDraft[]> {
  const pairs = drafts.flatMap((d) => [...d.to, ...(d.cc ?? []), ...(d.bcc ?? [])].map((email) => ({ teamId: d.teamId, email })));
  const suppressed = await findSuppressed(sql, pairs);
  if (suppressed.size === 0) return drafts;
  return drafts.map((d) => {
    const keep = (list: string[] | undefined) => list?.filter((a) => !suppressed.has(`${d.teamId}:${normalise(a)}`));
    const to = keep(d.to)!;
    if (to.length === 0) return { ...d, suppressed: { reason: ALL_TO_SUPPRESSED } };
    return { ...d, to, cc: keep(d.cc), bcc: keep(d.bcc) };
  });
}
