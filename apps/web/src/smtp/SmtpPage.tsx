import type { SmtpSettings } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { Link } from 'react-router';
import { FirstEmailSnippet } from '../overview/FirstEmailSnippet';
import { TestEmailButton } from '../overview/TestEmailButton';
import { useTeam } from '../session/session';
import { CopyButton } from '../ui/CopyButton';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';

const SECURITY: Record<SmtpSettings['ports'][number]['security'], string> = {
  STARTTLS: 'STARTTLS (plain connection, then TLS before AUTH)',
  TLS: 'TLS from the first byte (implicit TLS, "SSL")',
};

/** How an application that can only speak SMTP reaches this instance's relay (docs/smtp.md). */
export default function SmtpPage() {
  const { base, isAdmin } = useTeam();
  const smtp = useTeamQuery<SmtpSettings>(['smtp-settings'], '/smtp-settings');
  return (
    <>
      <PageHeader
        title="SMTP"
        description="Applications that can only send over SMTP (CMSs, framework mailers, printers) send through the relay; each message becomes an email like one sent with the API."
      />
      <ErrorNotice error={smtp.error} />
      {smtp.isPending && <Loading />}
      {smtp.data && (
        <section className="card" aria-labelledby="smtp-settings-h">
          <h2 id="smtp-settings-h">Connection settings</h2>
          <dl className="fields smtp-settings">
            <dt>Host</dt>
            <dd className="copy-cell">
              <code>{smtp.data.host}</code>
              <CopyButton value={smtp.data.host} label="Copy the SMTP host" />
            </dd>
            <dt>Port</dt>
            <dd>
              {smtp.data.ports.length ? (
                <ul className="plain-list">
                  {smtp.data.ports.map((p) => (
                    <li key={p.port}>
                      <code>{p.port}</code>: {SECURITY[p.security]}
                    </li>
                  ))}
                </ul>
              ) : (
                'The relay is off on this instance (SMTP_PORT and SMTPS_PORT are 0), or its ports are chosen at start: ask the operator.'
              )}
            </dd>
            <dt>Username</dt>
            <dd className="copy-cell">
              <code>{smtp.data.username}</code>
              <CopyButton value={smtp.data.username} label="Copy the SMTP username" />
            </dd>
            <dt>Password</dt>
            <dd>
              An API key of this team (FULL or SENDING).{' '}
              {isAdmin ? <Link to={`${base}/api-keys`}>Create one</Link> : 'Ask an admin of the team for one.'}
            </dd>
            <dt>Sender</dt>
            <dd>
              Any address at a <Link to={`${base}/domains`}>verified domain</Link> of this team.
            </dd>
            <dt>Certificate (SHA-256)</dt>
            <dd>
              {smtp.data.certificate.fingerprint256 ? (
                <span className="copy-cell">
                  <code className="fingerprint">{smtp.data.certificate.fingerprint256}</code>
                  <CopyButton value={smtp.data.certificate.fingerprint256} label="Copy the certificate fingerprint" />
                </span>
              ) : smtp.data.certificate.source === 'FILE' ? (
                'The certificate file (SMTP_TLS_CERT) could not be read by the API: ask the operator for its fingerprint.'
              ) : (
                'The relay makes a self-signed certificate when it starts and logs its fingerprint: ask the operator for it. Clients must be told to trust it.'
              )}
            </dd>
          </dl>
          <p className="muted small">
            Compare the fingerprint with the one your client shows when it connects: they match when you reach this relay and no one in
            between.
          </p>
        </section>
      )}
      <section className="card" aria-labelledby="smtp-try-h">
        <h2 id="smtp-try-h">Try it</h2>
        <TestEmailButton />
        <FirstEmailSnippet initial="smtp" />
      </section>
    </>
  );
}
