import { Link } from 'react-router';
import type { EmailRecipient } from '../api/types';
import { addressPagePath, ExplanationText } from '../deliverability/ExplanationText';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { StatusBadge } from '../ui/StatusBadge';

/** Every recipient of an email with its outcome: those not sent to are listed too, with why (the server's explanation). */
export function Recipients({ recipients }: { recipients: EmailRecipient[] }) {
  const { base } = useTeam();
  return (
    <DataTable caption="Recipients and what happened to each" columns={['Recipient', 'Field', 'Outcome', 'Why']}>
      {recipients.map((r) => (
        <tr key={`${r.type}:${r.email}`}>
          <td>
            {r.email}
            <div className="small">
              <Link to={addressPagePath(base, r.email)} aria-label={`Everything about ${r.email}`}>
                All mail to this address
              </Link>
            </div>
          </td>
          <td>{r.type}</td>
          <td>
            <StatusBadge status={r.status} />
          </td>
          <td>
            {r.explanation ? (
              <>
                <ExplanationText explanation={r.explanation} />
                {r.status === 'SUPPRESSED' && <Link to={`${base}/suppressions`}>Suppression list</Link>}
              </>
            ) : (
              (r.reason ?? <span className="muted">—</span>)
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
