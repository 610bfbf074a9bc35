import type { Config } from '@mailrail/platform/config/schema';
import { hmacHex, safeEqualHex } from '@mailrail/platform/crypto/secrets';

type LinkConfig = Pick<Config, 'PUBLIC_URL' | 'SECRET'>;

/** Ids in a link are ours (24 characters); anything longer is not a link we made. */
const MAX_LINK_ID_LENGTH = 128;

/** Confirmation links stay valid for 7 days. */
export const DOUBLE_OPT_IN_TTL_MS = 7 * 24 * 3600 * 1000;

// Each link kind signs its own prefix, so a signature of one kind can never pass as another.
const unsubscribeSignature = (secret: string, contactId: string, campaignId: string) =>
  hmacHex(secret, `unsubscribe:${contactId}:${campaignId}`);
const doubleOptInSignature = (secret: string, contactId: string, expiresAt: number) =>
  hmacHex(secret, `double-opt-in:${contactId}:${expiresAt}`);

function unsubscribeQuery(config: LinkConfig, contactId: string, campaignId: string | null): string {
  const cid = campaignId ?? '';
  return new URLSearchParams({ c: contactId, cid, sig: unsubscribeSignature(config.SECRET, contactId, cid) }).toString();
}

/** The unsubscribe page of one contact for one campaign (`{{usesend_unsubscribe_url}}`). */
export function buildUnsubscribeUrl(config: LinkConfig, contactId: string, campaignId: string | null): string {
  return `${config.PUBLIC_URL}/unsubscribe?${unsubscribeQuery(config, contactId, campaignId)}`;
}

/** The RFC 8058 target for `List-Unsubscribe` (POST `List-Unsubscribe=One-Click`). */
export function buildOneClickUnsubscribeUrl(config: LinkConfig, contactId: string, campaignId: string | null): string {
  return `${config.PUBLIC_URL}/unsubscribe/one-click?${unsubscribeQuery(config, contactId, campaignId)}`;
}

export interface UnsubscribeLink {
  contactId: string;
  campaignId: string | null;
}

/** Checks `c`, `cid`, `sig` from a link; null when anything is missing or the signature is wrong. */
export function verifyUnsubscribeLink(config: LinkConfig, params: Record<string, unknown>): UnsubscribeLink | null {
  const { c, cid, sig } = params;
  if (typeof c !== 'string' || !c || c.length > MAX_LINK_ID_LENGTH || typeof sig !== 'string') return null;
  const campaignId = typeof cid === 'string' ? cid : '';
  if (campaignId.length > MAX_LINK_ID_LENGTH) return null;
  if (!/^[0-9a-f]{64}$/.test(sig) || !safeEqualHex(sig, unsubscribeSignature(config.SECRET, c, campaignId))) return null;
  return { contactId: c, campaignId: campaignId || null };
}

export function buildDoubleOptInUrl(config: LinkConfig, contactId: string, now: Date): string {
  const expiresAt = now.getTime() + DOUBLE_OPT_IN_TTL_MS;
  const q = new URLSearchParams({
    contactId,
    expiresAt: String(expiresAt),
    signature: doubleOptInSignature(config.SECRET, contactId, expiresAt),
  });
  return `${config.PUBLIC_URL}/subscribe/confirm?${q.toString()}`;
}

export type DoubleOptInLinkCheck = { ok: true; contactId: string } | { ok: false; reason: 'invalid' | 'expired' };

/** The signature is checked before the expiry, so a forged link never learns whether it "expired". */
export function verifyDoubleOptInLink(config: LinkConfig, params: Record<string, unknown>, now: Date): DoubleOptInLinkCheck {
  const { contactId, expiresAt, signature } = params;
  if (
    typeof contactId !== 'string' ||
    !contactId ||
    contactId.length > MAX_LINK_ID_LENGTH ||
    typeof expiresAt !== 'string' ||
    !/^\d{1,16}$/.test(expiresAt)
  ) {
    return { ok: false, reason: 'invalid' };
  }
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return { ok: false, reason: 'invalid' };
  if (!safeEqualHex(signature, doubleOptInSignature(config.SECRET, contactId, Number(expiresAt)))) return { ok: false, reason: 'invalid' };
  if (Number(expiresAt) <= now.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, contactId };
}
