import type { DnsRecord, DnsRecordPurpose } from '../api/types';
import { CopyButton } from '../ui/CopyButton';
import { StatusBadge } from '../ui/StatusBadge';

/** What each record is for, in a line a newcomer can follow. */
const PURPOSES: Record<DnsRecordPurpose, { label: string; why: string }> = {
  DKIM: { label: 'DKIM', why: 'Signs your mail, so receivers know it really comes from this domain.' },
  MAIL_FROM: { label: 'MAIL FROM', why: 'Routes bounces and complaints of your mail back to SES, on a subdomain of its own.' },
  SPF: { label: 'SPF', why: 'Allows SES to send for that MAIL FROM subdomain.' },
  DMARC: { label: 'DMARC', why: 'Tells receivers what to do with mail that fails DKIM and SPF. Recommended, not required.' },
  OWNERSHIP: { label: 'Ownership', why: 'Proves your team controls the name, which another team added too.' },
};

/** What to publish, one row per record (a block of labelled lines on a phone): what it is for, its name in the zone and in full, its value; each one click from the clipboard. */
export function DnsRecordsTable({ records }: { records: DnsRecord[] }) {
  return (
    <div className="table-wrap">
      <table className="list dns stacks">
        <caption className="visually-hidden">DNS records to publish, with the result of the last check</caption>
        <thead>
          <tr>
            <th scope="col">Purpose</th>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Last check</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r, i) => {
            const purpose = PURPOSES[r.purpose];
            const chunks = r.valueChunks && r.valueChunks.length > 1 ? r.valueChunks.map((c) => `"${c}"`).join(' ') : null;
            return (
              <tr key={i} data-testid={`dns-record-${r.purpose}`}>
                <td data-label="">
                  <strong>{purpose.label}</strong>
                  <div className="muted small dns-why">{purpose.why}</div>
                </td>
                <td data-label="Type">
                  {r.type}
                  {r.priority && <div className="muted small">priority {r.priority}</div>}
                  <div className="muted small">TTL {r.ttl}</div>
                </td>
                <td data-label="Name">
                  <div className="copy-cell">
                    <code>{r.name}</code>
                    <CopyButton value={r.name} label={`Copy the name of the ${purpose.label} record, relative to ${r.zone}`} />
                  </div>
                  <div className="muted small">
                    in the zone <code>{r.zone}</code>; in full:
                  </div>
                  <div className="copy-cell">
                    <code className="dns-full-name">{r.fullName}</code>
                    <CopyButton value={r.fullName} label={`Copy the full name of the ${purpose.label} record`} text="Copy full" />
                  </div>
                </td>
                <td data-label="Value">
                  <div className="copy-cell">
                    <code className="dns-value" tabIndex={0}>
                      {r.value}
                    </code>
                    <CopyButton value={r.value} label={`Copy the value of the ${purpose.label} record`} />
                  </div>
                  {chunks && (
                    <details>
                      <summary className="small">For DNS providers that take 255-character pieces</summary>
                      <div className="copy-cell">
                        <code className="dns-value" tabIndex={0}>
                          {chunks}
                        </code>
                        <CopyButton value={chunks} label={`Copy the value of the ${purpose.label} record in pieces`} />
                      </div>
                    </details>
                  )}
                </td>
                <td data-label="Last check">
                  <StatusBadge status={r.status} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
