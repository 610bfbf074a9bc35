import {
  buildDoubleOptInUrl,
  buildOneClickUnsubscribeUrl,
  buildUnsubscribeUrl,
  DOUBLE_OPT_IN_TTL_MS,
  verifyDoubleOptInLink,
  verifyUnsubscribeLink,
} from './links';

const config = { PUBLIC_URL: 'https://m.example.com', SECRET: 's'.repeat(40) };
const params = (url: string) => Object.fromEntries(new URL(url).searchParams);

describe('unsubscribe links', () => {
  it('round-trips and binds contact and campaign', () => {
    const url = buildUnsubscribeUrl(config, 'contact1', 'camp1');
    expect(verifyUnsubscribeLink(config, params(url))).toEqual({ contactId: 'contact1', campaignId: 'camp1' });
    expect(verifyUnsubscribeLink(config, { ...params(url), cid: 'camp2' })).toBeNull();
    expect(verifyUnsubscribeLink(config, { ...params(url), c: 'contact2' })).toBeNull();
    expect(verifyUnsubscribeLink({ ...config, SECRET: 't'.repeat(40) }, params(url))).toBeNull();
    expect(verifyUnsubscribeLink(config, { ...params(url), sig: ['a'] })).toBeNull();
  });

  it('works without a campaign, and the one-click URL carries the same signature', () => {
    const url = buildUnsubscribeUrl(config, 'contact1', null);
    expect(verifyUnsubscribeLink(config, params(url))).toEqual({ contactId: 'contact1', campaignId: null });
    const oneClick = buildOneClickUnsubscribeUrl(config, 'contact1', null);
    expect(oneClick.startsWith('https://m.example.com/unsubscribe/one-click?')).toBe(true);
    expect(params(oneClick)).toEqual(params(url));
  });
});

describe('link length caps', () => {
  it('refuses ids over 128 characters before any hashing, even when signed', () => {
    const long = 'c'.repeat(129);
    expect(verifyUnsubscribeLink(config, params(buildUnsubscribeUrl(config, long, 'camp1')))).toBeNull();
    expect(verifyUnsubscribeLink(config, params(buildUnsubscribeUrl(config, 'contact1', long)))).toBeNull();
    expect(verifyDoubleOptInLink(config, params(buildDoubleOptInUrl(config, long, new Date())), new Date())).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(verifyUnsubscribeLink(config, params(buildUnsubscribeUrl(config, 'c'.repeat(128), 'camp1')))).not.toBeNull();
  });
});

describe('double opt-in links', () => {
  const now = new Date('2026-11-22T10:00:00Z');

  it('is valid for 7 days and refused afterwards', () => {
    const p = params(buildDoubleOptInUrl(config, 'c1', now));
    expect(Number(p.expiresAt)).toBe(now.getTime() + DOUBLE_OPT_IN_TTL_MS);
    expect(verifyDoubleOptInLink(config, p, new Date(now.getTime() + DOUBLE_OPT_IN_TTL_MS - 1))).toEqual({ ok: true, contactId: 'c1' });
    expect(verifyDoubleOptInLink(config, p, new Date(now.getTime() + DOUBLE_OPT_IN_TTL_MS))).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses any change to the link', () => {
    const p = params(buildDoubleOptInUrl(config, 'c1', now));
    for (const bad of [
      { ...p, contactId: 'c2' },
      { ...p, expiresAt: String(Number(p.expiresAt) + 1) },
      { ...p, signature: 'f'.repeat(64) },
      { contactId: 'c1' },
    ]) {
      expect(verifyDoubleOptInLink(config, bad, now)).toEqual({ ok: false, reason: 'invalid' });
    }
    // An unsubscribe signature is not a confirmation signature.
    const unsub = params(buildUnsubscribeUrl(config, 'c1', ''));
    expect(verifyDoubleOptInLink(config, { ...p, signature: unsub.sig }, now)).toEqual({ ok: false, reason: 'invalid' });
  });
});
