import { Link, useParams } from 'react-router';
import type { EventItem } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';

// One event (GET /v1/events/{id}): its fields, its contact, the email or campaign it is about, and
// its properties as JSON.

export default function EventPage() {
  const { base } = useTeam();
  const eventId = useParams().eventId!;
  const event = useTeamQuery<EventItem>(['event', eventId], `/v1/events/${encodeURIComponent(eventId)}`);
  const e = event.data;
  const emailId = typeof e?.properties.emailId === 'string' ? e.properties.emailId : null;
  const campaignId = typeof e?.properties.campaignId === 'string' ? e.properties.campaignId : null;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/events`}>← Events</Link>
      </p>
      <ErrorNotice error={event.error} />
      {event.isPending && <Loading />}
      {e && (
        <>
          <PageHeader
            title={e.name}
            description={
              e.source === 'mailrail' ? 'Built-in event, recorded by mailrail' : 'Sent by your application (POST /api/v1/events)'
            }
          />
          <section className="card" aria-labelledby="event-fields-h">
            <h2 id="event-fields-h">Details</h2>
            <dl className="fields event-fields">
              <dt>Contact</dt>
              <dd>
                {e.contactEmail ? (
                  <>
                    <Link to={`${base}/contact-books/${e.contactBookId}?search=${encodeURIComponent(e.contactEmail)}`}>
                      {e.contactEmail}
                    </Link>{' '}
                    <Link to={`${base}/events?email=${encodeURIComponent(e.contactEmail)}`} className="small">
                      all of this address's events
                    </Link>
                  </>
                ) : (
                  <span className="muted">deleted contact ({e.contactId})</span>
                )}
              </dd>
              {emailId && (
                <>
                  <dt>Email</dt>
                  <dd>
                    <Link to={`${base}/emails/${emailId}`}>{emailId}</Link>
                  </dd>
                </>
              )}
              {campaignId && (
                <>
                  <dt>Campaign</dt>
                  <dd>
                    <Link to={`${base}/campaigns/${campaignId}`}>{campaignId}</Link>
                  </dd>
                </>
              )}
              <dt>Occurred</dt>
              <dd>{formatDateTime(e.occurredAt, true)}</dd>
              <dt>Recorded</dt>
              <dd>{formatDateTime(e.createdAt, true)}</dd>
              {e.eventId && (
                <>
                  <dt>{e.source === 'mailrail' ? 'Source key' : 'Your event id'}</dt>
                  <dd>
                    <code>{e.eventId}</code>
                  </dd>
                </>
              )}
              <dt>Id</dt>
              <dd>
                <code>{e.id}</code>
              </dd>
            </dl>
          </section>
          <section className="card" aria-labelledby="event-properties-h">
            <h2 id="event-properties-h">Properties</h2>
            <pre className="event-properties">{JSON.stringify(e.properties, null, 2)}</pre>
          </section>
        </>
      )}
    </>
  );
}
