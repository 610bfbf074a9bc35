import { createPublicKey } from 'node:crypto';
import type { Db } from '@mailrail/platform/db/client';
import { checkDkimRecord, checkMailFromMx, type RecordCheck } from '../domains/dns-check';
import type { DnsLookup } from '../domains/dns-lookup';
import type { IdentityPort, IdentityStatusValue } from './port';

// SES keeps an identity PENDING while it waits for DNS (up to 72 hours), so a record that is not
// there yet reads PENDING here too; verify-domain's own DNS check names what is missing.
const asSesWould = (c: RecordCheck): IdentityStatusValue => (c.status === 'FAILED' ? 'PENDING' : c.status);

/**
 * Identities kept in the LocalSesIdentity table, for development and tests. Their statuses come
 * from the same DNS checks SES would make (DKIM TXT, MAIL FROM MX) against DNS_RESOLVER.
 * Creating an identity that exists replaces it, which keeps a development database forgiving.
 */
export function createLocalIdentityPort(db: Db, dns: DnsLookup): IdentityPort {
  return {
    kind: 'local',
    async createIdentity(input, tx = db) {
      const dkimPublicKey = createPublicKey(input.dkimPrivateKey).export({ type: 'spki', format: 'der' }).toString('base64');
      const data = { region: input.region, dkimSelector: input.dkimSelector, dkimPublicKey, mailFromDomain: input.mailFromDomain };
      await tx.localSesIdentity.upsert({ where: { identity: input.domain }, create: { identity: input.domain, ...data }, update: data });
    },
    async getIdentityStatus(ref) {
      const row = await db.localSesIdentity.findUnique({ where: { identity: ref.domain } });
      if (!row || row.region !== ref.region) return null;
      const mailFromParent = row.mailFromDomain.replace(/^mail\./, '');
      const [dkim, mailFrom] = await Promise.all([
        checkDkimRecord(dns, row.identity, row.dkimSelector, row.dkimPublicKey),
        checkMailFromMx(dns, mailFromParent, row.region),
      ]);
      const dkimStatus = asSesWould(dkim);
      return {
        verificationStatus: dkimStatus,
        dkimStatus,
        mailFromStatus: asSesWould(mailFrom),
        ...(dkim.status === 'TEMPORARY_FAILURE' ? { errorType: 'DNS_SERVER_ERROR' } : {}),
      };
    },
    async deleteIdentity(ref) {
      await db.localSesIdentity.deleteMany({ where: { identity: ref.domain } });
    },
  };
}
