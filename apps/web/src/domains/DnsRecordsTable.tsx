import type { DnsRecord } from '../api/types';
import { CopyButton } from '../ui/CopyButton';
import { StatusBadge } from '../ui/StatusBadge';

/** What to publish, one row per record, each name and value one click from the clipboard. */
export function DnsRecordsTable({ records }: { records: DnsRecord[] }) {
  return (
    <div className="table-wrap">
      <table className="list dns">
        <caption className="visually-hidden">DNS records to publish, with the result of the last check</caption>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">TTL</th>
            <th scope="col">Last check</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r, i) => {
            const value = r.value;
            return (
              <tr key={i}>
                <td>
                  {r.type}
                  {r.priority && <div className="muted small">priority {r.priority}</div>}
                  {r.recommended && <div className="muted small">recommended</div>}
                </td>
                <td>
                  <div className="copy-cell">
                    <code>{r.name}</code>
                    <CopyButton value={r.name} label={`Copy name of the ${r.type} record ${r.name}`} />
                  </div>
                </td>
                <td>
                  <div className="copy-cell">
                    <code className="dns-value" tabIndex={0}>
                      {value}
                    </code>
                    <CopyButton value={value} label={`Copy value of the ${r.type} record ${r.name}`} />
                  </div>
                  {r.valueChunks && r.valueChunks.length > 1 && (
                    <details>
                      <summary className="small">For DNS providers that take 255-character pieces</summary>
                      <div className="copy-cell">
                        <code className="dns-value" tabIndex={0}>
                          {r.valueChunks.map((c) => `"${c}"`).join(' ')}
                        </code>
                        <CopyButton value={r.valueChunks.map((c) => `"${c}"`).join(' ')} label={`Copy the value of ${r.name} in pieces`} />
                      </div>
                    </details>
                  )}
                </td>
                <td>{r.ttl}</td>
                <td>
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
