import type { Domain } from '@mailrail/platform/db/generated/client';
import { buildDnsRecords, type DnsRecord } from './dns-records';
import { propagationEndsAt } from './verification-schedule';

export interface DomainView {
  id: number;
  name: string;
  teamId: number;
  status: string;
  region: string;
  clickTracking: boolean;
  openTracking: boolean;
  publicKey: string;
  dkimSelector: string;
  dkimStatus: string | null;
  spfDetails: string | null;
  dmarcAdded: boolean;
  isVerifying: boolean;
  errorMessage: string | null;
  subdomain: string | null;
  verificationError: string | null;
  lastCheckedTime: string | null;
  hasEverVerified: boolean;
  /** When the worker checks the domain next (mailrail; not in useSend). */
  nextCheckAt: string | null;
  /**
   * Until when missing records keep a never-verified domain PENDING instead of FAILED (created +
   * DNS_PROPAGATION_HOURS); null once it has verified (mailrail; not in useSend).
   */
  propagationEndsAt: string | null;
  createdAt: string;
  updatedAt: string;
  dnsRecords: DnsRecord[];
}

/**
 * The public shape of a domain, for API answers and webhook payloads alike: plain JSON (ISO
 * dates) and never the encrypted private key.
 */
export function domainView(d: Domain): DomainView {
  return {
    id: d.id,
    name: d.name,
    teamId: d.teamId,
    status: d.status,
    region: d.region,
    clickTracking: d.clickTracking,
    openTracking: d.openTracking,
    publicKey: d.publicKey,
    dkimSelector: d.dkimSelector,
    dkimStatus: d.dkimStatus,
    spfDetails: d.spfDetails,
    dmarcAdded: d.dmarcAdded,
    isVerifying: d.isVerifying,
    errorMessage: d.errorMessage,
    subdomain: d.subdomain,
    verificationError: d.verificationError,
    lastCheckedTime: d.lastCheckedTime ? d.lastCheckedTime.toISOString() : null,
    hasEverVerified: d.hasEverVerified,
    nextCheckAt: d.nextCheckAt ? d.nextCheckAt.toISOString() : null,
    propagationEndsAt: d.hasEverVerified ? null : propagationEndsAt(d.createdAt).toISOString(),
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
    dnsRecords: buildDnsRecords(d),
  };
}
