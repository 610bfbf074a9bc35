import { Link } from 'react-router';
import type { EmailRecipient } from '../api/types';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { StatusBadge } from '../ui/StatusBadge';

// Why a recipient was not sent to, in the words of someone who did not write the suppression list.
const SUPPRESSED_BECAUSE: Record<string, string> = {
  HARD_BOUNCE: 'Not sent: the address is on your suppression list because an earlier email to it bounced permanently.',
  COMPLAINT: 'Not sent: the address is on your suppression list because its owner marked an earlier email as spam.',
  MANUAL: 'Not sent: the address was added to your suppression list by hand or through the API.',
};

/** Every recipient of an email with its outcome: those not sent to are listed too, with why. */
export function Recipients({ recipients }: { recipients: EmailRecipient[] }) {
  const { base } = useTeam();
  return (
    <DataTable caption="Recipients and what happened to each" columns={['Recipient', 'Field', 'Outcome', 'Why']}>
      {recipients.map((r) => {
        const suppressed = r.status === 'SUPPRESSED' && r.reason !== null ? SUPPRESSED_BECAUSE[r.reason] : undefined;
        return (
          <tr key={`${r.type}:${r.email}`}>
            <td>{r.email}</td>
            <td>{r.type}</td>
            <td>
              <StatusBadge status={r.status} />
            </td>
            <td>
              {suppressed ? (
                <>
                  {suppressed} <Link to={`${base}/suppressions`}>Suppression list</Link>
                </>
              ) : (
                (r.reason ?? <span className="muted">—</span>)
              )}
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
