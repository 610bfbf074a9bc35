import type { Db } from '../db/client';
import { encryptSecret } from '../crypto/secrets';
import { generateDkimKeyPair } from './dkim';

export interface AddDomainInput {
  teamId: number;
  name: string;
  region: string;
  dkimSelector: string;
  subdomain?: string | null;
  /** Operator override for sandboxes: the domain is stored as verified. */
  verified?: boolean;
}

/** Stores a domain with a fresh DKIM key (the private half encrypted with SECRET). */
export async function insertDomain(db: Db, secret: string, input: AddDomainInput) {
  const { publicKey, privateKeyPem } = generateDkimKeyPair();
  const verified = input.verified === true;
  return db.domain.create({
    data: {
      teamId: input.teamId,
      name: input.name.toLowerCase(),
      region: input.region,
      publicKey,
      dkimPrivateKeyEnc: encryptSecret(secret, privateKeyPem),
      dkimSelector: input.dkimSelector,
      subdomain: input.subdomain ?? null,
      status: verified ? 'SUCCESS' : 'PENDING',
      dkimStatus: verified ? 'SUCCESS' : 'NOT_STARTED',
      spfDetails: verified ? 'SUCCESS' : 'NOT_STARTED',
      hasEverVerified: verified,
      lastCheckedTime: verified ? new Date() : null,
    },
  });
}
