import { checkSenderDomain, senderDomainError } from './sender-domain';

const verified = { id: 1, status: 'SUCCESS' };
const pending = { id: 2, status: 'PENDING' };

describe('checkSenderDomain, the one sender-domain rule', () => {
  it('accepts a verified domain of the team, and a bound key on its own domain', () => {
    expect(checkSenderDomain(verified, 'a.org', null)).toEqual({ ok: true, domain: verified });
    expect(checkSenderDomain(verified, 'a.org', 1)).toEqual({ ok: true, domain: verified });
  });

  it('refuses an unknown or unverified domain with the documented messages', () => {
    expect(checkSenderDomain(null, 'a.org', null)).toEqual({
      ok: false,
      refusal: 'not-found',
      message: 'Domain: a.org not found. Add it and verify it before sending',
    });
    expect(checkSenderDomain(pending, 'a.org', null)).toEqual({
      ok: false,
      refusal: 'not-verified',
      message: 'Domain: a.org is not verified',
    });
  });

  it('refuses a key bound to another domain before saying whether the domain exists', () => {
    for (const domain of [null, pending, verified]) {
      expect(checkSenderDomain(domain, 'a.org', 9)).toMatchObject({
        ok: false,
        refusal: 'forbidden',
        message: 'API key does not have access to domain: a.org',
      });
    }
  });

  it('answers a bound-key refusal as a 403 and the others as a 400 on the field', () => {
    const forbidden = senderDomainError({ refusal: 'forbidden', message: 'm' }, ['from']);
    expect([forbidden.status, forbidden.issues]).toEqual([403, undefined]);
    const missing = senderDomainError({ refusal: 'not-found', message: 'm' }, [3, 'from']);
    expect([missing.status, missing.issues]).toEqual([400, [{ path: [3, 'from'], message: 'm' }]]);
  });
});
