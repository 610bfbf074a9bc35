import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { AddressReport } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { StatusBadge } from '../ui/StatusBadge';
import { ExplanationText } from './ExplanationText';

const LIMIT = 20;

// One address, everything the team knows about why mail to it did or did not arrive
// (GET /v1/addresses/{address}, docs/deliverability.md).
export default function AddressPage() {
  const [params, setParams] = useSearchParams();
  const address = (params.get('address') ?? '').trim();
  // The box follows the URL (a link from an email, the navigation, Back) until the user types.
  const [draft, setDraft] = useState(address);
  const [shown, setShown] = useState(address);
  if (shown !== address) {
    setShown(address);
    setDraft(address);
  }
  const onSearch = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const q = draft.trim();
    setParams(q ? { address: q } : {});
  };
  return (
    <>
      <PageHeader
        title="Why didn't this arrive?"
        description="Look up a recipient address: whether mailrail still sends to it, its place in your contact books, and what happened to each email sent to it, in plain words."
      />
      <form className="filters card" role="search" onSubmit={onSearch}>
        <Field label="Recipient address">
          <input
            type="email"
            name="address"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            placeholder="ada@example.org"
            required
            autoComplete="off"
          />
        </Field>
        <div className="filter-actions">
          <button type="submit" className="btn btn-primary">
            Look up
          </button>
        </div>
      </form>
      {address ? (
        <Report address={address} key={address} />
      ) : (
        <EmptyState title="Enter an address to start">
          <p>
            Paste the address of someone who says they did not get your email. Every email and campaign message to it is listed with what
            happened.
          </p>
        </EmptyState>
      )}
    </>
  );
}

function Report({ address }: { address: string }) {
  // Older pages: the cursors that led to each, so "Newer" goes back.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const report = useTeamQuery<AddressReport>(
    ['address', address],
    `/v1/addresses/${encodeURIComponent(address)}`,
    { limit: LIMIT, cursor },
    { placeholderData: (prev) => prev },
  );
  const r = report.data;
  return (
    <>
      <ErrorNotice error={report.error} />
      {report.isPending && <Loading />}
      {r && (
        <>
          <Verdict report={r} />
          <Suppression report={r} />
          <Contacts report={r} />
          <section aria-labelledby="messages-h">
            <h2 id="messages-h">Emails to {r.address}</h2>
            {r.messages.length === 0 ? (
              <p className="muted">{cursors.length ? 'No older emails.' : 'mailrail has no email to this address in its log.'}</p>
            ) : (
              <Messages report={r} />
            )}
            {(cursors.length > 0 || r.nextCursor) && (
              <nav className="pager" aria-label="Email pages">
                <button type="button" className="btn" disabled={!cursors.length} onClick={() => setCursors((c) => c.slice(0, -1))}>
                  Newer
                </button>
                <button type="button" className="btn" disabled={!r.nextCursor} onClick={() => setCursors((c) => [...c, r.nextCursor!])}>
                  Older
                </button>
              </nav>
            )}
          </section>
        </>
      )}
    </>
  );
}

/** The answer first, in one sentence: does mail to this address leave at all? */
function Verdict({ report: r }: { report: AddressReport }) {
  const last = r.messages[0];
  return (
    <section className={`card ${r.suppression ? 'notice-warn' : 'card-accent'}`} aria-labelledby="verdict-h">
      <h2 id="verdict-h" className="visually-hidden">
        In short
      </h2>
      <p className="verdict">
        {r.suppression ? (
          <>
            <strong>mailrail does not send to {r.address}.</strong> It is on your suppression list since{' '}
            {formatDateTime(r.suppression.createdAt)}. Reason: {(r.suppression.cause ?? r.suppression.explanation).title.toLowerCase()}.
          </>
        ) : (
          <>
            <strong>mailrail sends to {r.address}.</strong> It is not on your suppression list.
          </>
        )}{' '}
        {last ? (
          <>
            The latest email to it ({formatDateTime(last.createdAt)}) is <StatusBadge status={last.status} />.
          </>
        ) : (
          'No email to it is in the log.'
        )}
      </p>
    </section>
  );
}

function Suppression({ report: r }: { report: AddressReport }) {
  const { base } = useTeam();
  const s = r.suppression;
  if (!s) return null;
  return (
    <section className="card" aria-labelledby="suppression-h">
      <h2 id="suppression-h">Suppression list</h2>
      <ExplanationText explanation={s.explanation} compact />
      {s.cause && (
        <>
          <h3>What happened to the email that put it there</h3>
          <ExplanationText explanation={s.cause} />
        </>
      )}
      <p>
        {s.causedByEmailId && (
          <>
            <Link to={`${base}/emails/${encodeURIComponent(s.causedByEmailId)}`}>Open the email that caused it</Link>
            {' · '}
          </>
        )}
        <Link to={`${base}/suppressions?search=${encodeURIComponent(r.address)}`}>Manage it on the suppression list</Link> (remove it there
        if the address works again).
      </p>
    </section>
  );
}

const CONTACT_STATE: Record<AddressReport['contacts'][number]['state'], string> = {
  SUBSCRIBED: 'Subscribed: campaigns to this book are sent to it.',
  UNSUBSCRIBED: 'Unsubscribed: campaigns to this book skip it.',
  PENDING_CONFIRMATION: 'Waiting for the double opt-in confirmation: campaigns skip it until then.',
};
const UNSUBSCRIBED_BECAUSE: Record<string, string> = {
  UNSUBSCRIBED: 'The contact unsubscribed (or was unsubscribed by hand or through the API).',
  BOUNCED: 'mailrail unsubscribed it when an email to it bounced permanently.',
  COMPLAINED: 'mailrail unsubscribed it when its owner marked an email as spam.',
};

function Contacts({ report: r }: { report: AddressReport }) {
  const { base } = useTeam();
  return (
    <section aria-labelledby="contacts-h">
      <h2 id="contacts-h">Contact books</h2>
      {r.contacts.length === 0 ? (
        <p className="muted">This address is in none of your contact books, so no campaign goes to it.</p>
      ) : (
        <DataTable caption="The address in each contact book" columns={['Contact book', 'State', 'Why', 'Last changed']}>
          {r.contacts.map((c) => (
            <tr key={c.contactId}>
              <td>
                <Link to={`${base}/contact-books/${encodeURIComponent(c.contactBookId)}`}>{c.contactBookName}</Link>
              </td>
              <td>
                <StatusBadge
                  status={c.state === 'SUBSCRIBED' ? 'ACTIVE' : c.state === 'UNSUBSCRIBED' ? 'FAILURE' : 'PENDING'}
                  label={c.state.replaceAll('_', ' ').toLowerCase()}
                />
              </td>
              <td>
                {CONTACT_STATE[c.state]} {c.unsubscribeReason && UNSUBSCRIBED_BECAUSE[c.unsubscribeReason]}
              </td>
              <td>{formatDateTime(c.updatedAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function Messages({ report: r }: { report: AddressReport }) {
  const { base } = useTeam();
  return (
    <DataTable caption={`Emails to ${r.address}, newest first, with what happened`} columns={['Sent', 'Email', 'Outcome', 'What happened']}>
      {r.messages.map((m) => (
        <tr key={m.emailId}>
          <td>{formatDateTime(m.createdAt)}</td>
          <td>
            <Link to={`${base}/emails/${encodeURIComponent(m.emailId)}`}>{m.subject || '(no subject)'}</Link>
            <div className="small muted">
              {m.campaign ? (
                <>
                  Campaign <Link to={`${base}/campaigns/${encodeURIComponent(m.campaign.id)}`}>{m.campaign.name}</Link>
                </>
              ) : (
                'Transactional'
              )}
              {m.type !== 'to' && ` · as ${m.type}`}
            </div>
          </td>
          <td>
            <StatusBadge status={m.status} />
          </td>
          <td>{m.explanation ? <ExplanationText explanation={m.explanation} /> : <span className="muted">Waiting to be sent.</span>}</td>
        </tr>
      ))}
    </DataTable>
  );
}
