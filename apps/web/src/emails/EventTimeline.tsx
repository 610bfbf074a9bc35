import type { EmailEvent } from '../api/types';
import { formatDateTime } from '../ui/format';
import { StatusBadge } from '../ui/StatusBadge';

interface Recipient {
  emailAddress?: string;
  status?: string;
  action?: string;
  diagnosticCode?: string;
}
interface Detail {
  bounceType?: string;
  bounceSubType?: string;
  bouncedRecipients?: Recipient[];
  complaintFeedbackType?: string;
  complainedRecipients?: Recipient[];
  reason?: string;
  error?: string;
  message?: string;
}

/** The facts a person looks for in a bounce or complaint, then everything SES said. */
function Summary({ data }: { data: Detail }) {
  const lines: string[] = [];
  if (data.bounceType) lines.push(`Bounce: ${data.bounceType}${data.bounceSubType ? ` / ${data.bounceSubType}` : ''}`);
  for (const r of data.bouncedRecipients ?? []) lines.push([r.emailAddress, r.status, r.diagnosticCode].filter(Boolean).join(' · '));
  if (data.complaintFeedbackType) lines.push(`Complaint: ${data.complaintFeedbackType}`);
  for (const r of data.complainedRecipients ?? []) if (r.emailAddress) lines.push(r.emailAddress);
  const reason = data.reason ?? data.error ?? data.message;
  if (typeof reason === 'string') lines.push(reason);
  if (!lines.length) return null;
  return (
    <ul className="event-summary">
      {lines.map((l, i) => (
        <li key={i}>{l}</li>
      ))}
    </ul>
  );
}

export function EventTimeline({ events }: { events: EmailEvent[] }) {
  if (!events.length) return <p className="muted">No events yet.</p>;
  return (
    <ol className="timeline">
      {events.map((ev, i) => {
        const data = ev.data && typeof ev.data === 'object' ? (ev.data as Detail) : null;
        return (
          <li key={i}>
            <div className="timeline-head">
              <StatusBadge status={ev.status} />
              <time dateTime={ev.createdAt}>{formatDateTime(ev.createdAt, true)}</time>
            </div>
            {data && Object.keys(data).length > 0 && (
              <>
                <Summary data={data} />
                <details>
                  <summary>Details from SES</summary>
                  <pre tabIndex={0}>{JSON.stringify(data, null, 2)}</pre>
                </details>
              </>
            )}
          </li>
        );
      })}
    </ol>
  );
}
