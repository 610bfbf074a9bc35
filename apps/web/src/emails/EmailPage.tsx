import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api } from '../api/client';
import type { EmailDetail } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime, toLocalInput } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { StatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';
import { EmailHtmlPreview } from './EmailHtmlPreview';
import { EventTimeline } from './EventTimeline';
import { Recipients } from './Recipients';
import { Attachments } from './Attachments';
import { EMAIL_SOURCE_LABELS } from './statuses';

export default function EmailPage() {
  const { base } = useTeam();
  const { emailId = '' } = useParams();
  // Statuses move on for a while after sending (sent, delivered, opened): keep the page current.
  const email = useTeamQuery<EmailDetail>(['email', emailId], `/v1/emails/${encodeURIComponent(emailId)}`, undefined, {
    refetchInterval: 5000,
  });
  const e = email.data;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/emails`}>← Emails</Link>
      </p>
      <ErrorNotice error={email.error} />
      {email.isPending && <Loading />}
      {e && (
        <>
          <PageHeader title={e.subject || '(no subject)'} description={<StatusBadge status={e.latestStatus} />} />
          {e.latestStatus === 'SCHEDULED' && <ScheduledActions email={e} />}
          <section className="card" aria-labelledby="fields-h">
            <h2 id="fields-h">Details</h2>
            <dl className="fields">
              <dt>From</dt>
              <dd>{e.from}</dd>
              <dt>To</dt>
              <dd>{e.to.join(', ')}</dd>
              {e.cc.length > 0 && (
                <>
                  <dt>Cc</dt>
                  <dd>{e.cc.join(', ')}</dd>
                </>
              )}
              {e.bcc.length > 0 && (
                <>
                  <dt>Bcc</dt>
                  <dd>{e.bcc.join(', ')}</dd>
                </>
              )}
              {e.replyTo.length > 0 && (
                <>
                  <dt>Reply to</dt>
                  <dd>{e.replyTo.join(', ')}</dd>
                </>
              )}
              <dt>Source</dt>
              <dd>{EMAIL_SOURCE_LABELS[e.source]}</dd>
              <dt>Created</dt>
              <dd>
                {formatDateTime(e.createdAt, true)}{' '}
                <Link to={requestLogAround(base, e.createdAt)} className="small">
                  requests around then
                </Link>
              </dd>
              {e.scheduledAt && (
                <>
                  <dt>Scheduled for</dt>
                  <dd>{formatDateTime(e.scheduledAt, true)}</dd>
                </>
              )}
              <dt>Email id</dt>
              <dd>
                <code>{e.id}</code>
              </dd>
            </dl>
          </section>
          <section aria-labelledby="recipients-h">
            <h2 id="recipients-h">Recipients</h2>
            <Recipients recipients={e.recipients} />
          </section>
          <section className="card" aria-labelledby="attachments-h">
            <h2 id="attachments-h">Attachments</h2>
            <Attachments attachments={e.attachmentList} />
          </section>
          <section className="card" aria-labelledby="events-h">
            <h2 id="events-h">Events</h2>
            <EventTimeline events={e.emailEvents} />
          </section>
          <section className="card" aria-labelledby="html-h">
            <h2 id="html-h">HTML</h2>
            {e.html ? <EmailHtmlPreview html={e.html} /> : <p className="muted">This email has no HTML part.</p>}
          </section>
          <section className="card" aria-labelledby="text-h">
            <h2 id="text-h">Text</h2>
            {e.text ? (
              <pre className="text-part" tabIndex={0}>
                {e.text}
              </pre>
            ) : (
              <p className="muted">This email has no text part.</p>
            )}
          </section>
        </>
      )}
    </>
  );
}

function ScheduledActions({ email }: { email: EmailDetail }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const [when, setWhen] = useState(email.scheduledAt ? toLocalInput(email.scheduledAt) : '');
  const refresh = () => qc.invalidateQueries({ queryKey: teamKey(team.id) });
  const path = `${base}/v1/emails/${encodeURIComponent(email.id)}`;
  const reschedule = useMutation({
    // The browser's local time, sent with its offset; the server decides whether it is acceptable.
    mutationFn: () => api.patch(path, { scheduledAt: when ? new Date(when).toISOString() : '' }),
    onSuccess: () => {
      toast({ title: 'Email rescheduled' });
      return refresh();
    },
  });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    reschedule.mutate();
  };
  return (
    <section className="card" aria-labelledby="sched-h">
      <h2 id="sched-h">Scheduled</h2>
      <form className="inline-form" onSubmit={submit}>
        <Field label="Send at (your time)">
          <input type="datetime-local" value={when} onChange={(ev) => setWhen(ev.target.value)} required />
        </Field>
        <button type="submit" className="btn" disabled={reschedule.isPending}>
          Reschedule
        </button>
        <ConfirmDialog
          trigger={
            <button type="button" className="btn btn-danger">
              Cancel email
            </button>
          }
          title="Cancel this email?"
          description={<p>It will not be sent. A cancelled email cannot be scheduled again.</p>}
          confirmLabel="Cancel email"
          onConfirm={async () => {
            await api.post(`${path}/cancel`);
            toast({ title: 'Email cancelled' });
            await refresh();
          }}
        />
      </form>
      <ErrorNotice error={reschedule.error} />
    </section>
  );
}

/** The request log filtered to the minute around an email's creation: the request that created it is there. */
function requestLogAround(base: string, createdAt: string): string {
  const at = Date.parse(createdAt);
  const q = new URLSearchParams({ startDate: new Date(at - 60_000).toISOString(), endDate: new Date(at + 60_000).toISOString() });
  return `${base}/request-log?${q.toString()}`;
}
