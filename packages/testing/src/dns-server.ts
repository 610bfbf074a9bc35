import dns2 from 'dns2';

const { Packet } = dns2;
// RFC 1035 response codes (dns2 has Packet.RCODE at run time but not in its typings).
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 };

export interface TestZoneEntry {
  /** Each TXT record as its character-strings (a long value split in 255-character pieces). */
  txt?: string[][];
  mx?: { exchange: string; priority: number }[];
  /** Answer SERVFAIL for this name. */
  servfail?: boolean;
}

export interface TestDnsServer {
  /** host:port, for DNS_RESOLVER. */
  address: string;
  /** Replaces the whole zone; names are absolute, without the trailing dot. */
  setZone(zone: Record<string, TestZoneEntry>): void;
  close(): Promise<void>;
}

/**
 * A real DNS server over UDP on 127.0.0.1 and a random port, answering from an in-memory zone:
 * verification tests use it to exercise node's resolver end to end. Unknown names are NXDOMAIN.
 */
export async function startTestDnsServer(): Promise<TestDnsServer> {
  let zone: Record<string, TestZoneEntry> = {};
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const entry = zone[q.name.toLowerCase().replace(/\.$/, '')];
      if (!entry) {
        response.header.rcode = RCODE.NXDOMAIN;
      } else if (entry.servfail) {
        response.header.rcode = RCODE.SERVFAIL;
      } else if (q.type === Packet.TYPE.TXT) {
        for (const data of entry.txt ?? [])
          response.answers.push({ name: q.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data } as never);
      } else if (q.type === Packet.TYPE.MX) {
        for (const mx of entry.mx ?? [])
          response.answers.push({ name: q.name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 60, ...mx } as never);
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = (addresses as { udp?: { port: number } }).udp!.port;
  return {
    address: `127.0.0.1:${port}`,
    setZone: (z) => {
      zone = Object.fromEntries(Object.entries(z).map(([k, v]) => [k.toLowerCase(), v]));
    },
    close: () => server.close(),
  };
}
