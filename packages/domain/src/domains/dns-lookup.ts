import { promises as dns } from 'node:dns';

/** A DNS server that did not answer usefully (timeout, SERVFAIL, refused): try again later. */
export class DnsTemporaryError extends Error {
  constructor(
    readonly code: string,
    readonly hostname: string,
  ) {
    super(`DNS lookup of ${hostname} failed temporarily (${code})`);
  }
}

/**
 * The DNS port of domain verification. A name that does not exist or has no record of the type
 * answers an empty list; any other failure throws DnsTemporaryError.
 */
export interface DnsLookup {
  /** Each record as its character-strings joined (a long DKIM key arrives in several). */
  txt(hostname: string): Promise<string[]>;
  mx(hostname: string): Promise<{ exchange: string; priority: number }[]>;
}

const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * node's resolver, pointed at `server` ("host:port", "host" or "[v6]:port") when given, else the
 * system's. A short timeout and two tries keep one slow zone from holding a worker for long.
 */
export function createDnsLookup(server?: string, timeoutMs = 3000): DnsLookup {
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
  if (server) resolver.setServers([server]);

  async function ask<T>(hostname: string, query: () => Promise<T[]>): Promise<T[]> {
    try {
      return await query();
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'EUNKNOWN';
      if (ABSENT.has(code)) return [];
      throw new DnsTemporaryError(code, hostname);
    }
  }

  return {
    txt: async (hostname) => (await ask(hostname, () => resolver.resolveTxt(hostname))).map((parts) => parts.join('')),
    mx: (hostname) => ask(hostname, () => resolver.resolveMx(hostname)),
  };
}
