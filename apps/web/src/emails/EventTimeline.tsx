import { explainEvent } from '@mailrail/domain/deliverability/explanations';
import type { EmailStatus } from '@mailrail/platform/db/generated/enums';
import type { EmailEvent } from '../api/types';
import { ExplanationText } from '../deliverability/ExplanationText';
import { formatDateTime } from '../ui/format';
import { StatusBadge } from '../ui/StatusBadge';

interface Recipient {
  emailAddress?: string;
  status?: string;
  action?: string;
  diagnosticCode?: string;
}
interface Detail {
  bouncedRecipients?: Recipient[];
  complainedRecipients?: Recipient[];
  delayedRecipients?: Recipient[];
  recipients?: unknown[];
  skippedRecipients?: { email?: string; type?: string }[];
}

// The events SES reported (ses-events/ses-event.ts); the others are mailrail's own decisions
// (queued, scheduled, failed, cancelled, suppressed), which SES never saw.
const FROM_SES = new Set<EmailStatus>([
  'SENT',
  'DELIVERED',
  'BOUNCED',
  'COMPLAINED',
  'DELIVERY_DELAYED',
  'REJECTED',
  'RENDERING_FAILURE',
  'OPENED',
  'CLICKED',
]);

/** Who the event is about, when it names recipients, and who was not sent to. */
function RecipientLines({ data }: { data: Detail }) {
  const lines: string[] = [];
  for (const r of [...(data.bouncedRecipients ?? []), ...(data.delayedRecipients ?? [])])
    lines.push([r.emailAddress, r.status, r.diagnosticCode].filter(Boolean).join(' · '));
  for (const r of data.complainedRecipients ?? []) if (r.emailAddress) lines.push(r.emailAddress);
  for (const r of data.recipients ?? []) if (typeof r === 'string') lines.push(`Accepted for ${r}`);
  for (const r of data.skippedRecipients ?? [])
    if (r.email) lines.push(`Not sent to ${r.email} (${r.type ?? 'to'}): on the suppression list`);
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
        const explanation = explainEvent(ev.status, ev.data);
        return (
          <li key={i}>
            <div className="timeline-head">
              <StatusBadge status={ev.status} />
              <time dateTime={ev.createdAt}>{formatDateTime(ev.createdAt, true)}</time>
            </div>
            {explanation && <ExplanationText explanation={explanation} />}
            {data && <RecipientLines data={data} />}
            {data && Object.keys(data).length > 0 && (
              <details>
                <summary>{FROM_SES.has(ev.status) ? 'Details from SES' : 'Details recorded by mailrail'}</summary>
                <pre tabIndex={0}>{JSON.stringify(data, null, 2)}</pre>
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}
