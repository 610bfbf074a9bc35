import type { Domain } from '../api/types';

/**
 * Where the records go at the common DNS providers, in a few steps each. Names there are relative to
 * the zone (the provider adds it), which is the `name` the table shows.
 */
export function DnsProviderGuide({ domain }: { domain: Pick<Domain, 'name' | 'subdomain' | 'dnsRecords'> }) {
  const zone = domain.dnsRecords[0]?.zone ?? domain.name;
  return (
    <div className="stack dns-guide">
      <p>
        Add the records in the DNS zone of <code>{zone}</code>, where your domain's nameservers point (often the company you bought the
        domain from). Most providers ask for the <strong>name relative to the zone</strong> (the first name in each row) and add{' '}
        <code>.{zone}</code> themselves; if yours asks for the full name, copy that one instead.
        {domain.subdomain && (
          <>
            {' '}
            If <code>{domain.name}</code> is a zone of its own at your provider, add the records there and leave{' '}
            <code>.{domain.subdomain}</code> off the end of each name.
          </>
        )}
      </p>
      <details>
        <summary>Cloudflare</summary>
        <ol>
          <li>Open the domain, then DNS → Records → Add record.</li>
          <li>
            Choose the type (TXT or MX); Name: the relative name; Content (TXT) or Mail server (MX): the value; Priority 10 for the MX.
          </li>
          <li>Paste the whole DKIM value as it is: Cloudflare splits long TXT values itself. Leave TTL on Auto.</li>
        </ol>
      </details>
      <details>
        <summary>Amazon Route 53</summary>
        <ol>
          <li>Hosted zones → {zone} → Create record.</li>
          <li>Record name: the relative name (the zone is shown after the box); record type: TXT or MX.</li>
          <li>
            Value: a TXT value in double quotes; for DKIM use the 255-character pieces (open "For DNS providers that take 255-character
            pieces" in its row). MX value: <code>10</code>, a space, then the mail server.
          </li>
        </ol>
      </details>
      <details>
        <summary>GoDaddy</summary>
        <ol>
          <li>My Products → the domain → DNS → Add New Record.</li>
          <li>Type TXT or MX; Name: the relative name; Value (TXT) or Points to (MX): the value; Priority 10 for the MX.</li>
          <li>Keep the default TTL and save each record.</li>
        </ol>
      </details>
      <details>
        <summary>Namecheap</summary>
        <ol>
          <li>Domain List → Manage → Advanced DNS.</li>
          <li>TXT records: Add New Record → TXT Record; Host: the relative name; Value: the value.</li>
          <li>The MX record: under Mail Settings choose Custom MX, then Host: the relative name; Value: the mail server; Priority 10.</li>
        </ol>
      </details>
      <details>
        <summary>Google Cloud DNS, Squarespace, others</summary>
        <ol>
          <li>Look for "DNS records", "Zone editor" or "Advanced DNS" at your provider and add each record with its type.</li>
          <li>
            A field that ends in <code>.{zone}</code> wants the relative name; one that does not, or that asks for a trailing dot, the full
            name.
          </li>
          <li>
            To see what the world sees:{' '}
            <code>dig +short TXT {domain.dnsRecords.find((r) => r.purpose === 'DKIM')?.fullName ?? `_domainkey.${domain.name}`}</code>.
          </li>
        </ol>
      </details>
    </div>
  );
}
