import type { Domain } from '../api/types';
import { formatDateTime, formatRelative } from '../ui/format';

const when = (iso: string | null) => (iso ? `${formatRelative(iso)} (${formatDateTime(iso)})` : 'not planned');

/**
 * Where verification stands, in words: a new domain waits for DNS (up to 72 hours, the server's
 * propagationEndsAt) and says what it has not seen yet and when it looks again, before any failure.
 */
export function VerificationState({ domain: d }: { domain: Domain }) {
  const propagating = d.status !== 'SUCCESS' && d.status !== 'FAILED' && d.propagationEndsAt !== null;
  return (
    <div className="stack verification-state" data-testid="verification-state">
      {d.status === 'SUCCESS' && <p>Verified: mail can be sent from this domain.</p>}
      {propagating && (
        <p>
          <strong>Waiting for DNS.</strong> Publish the records below at your DNS provider. New records can take up to 72 hours to be seen
          everywhere, so this domain stays pending until {formatDateTime(d.propagationEndsAt)} before a missing record counts as a failure.
        </p>
      )}
      {d.status === 'FAILED' && (
        <p>
          <strong>Verification failed.</strong> Correct the records named below at your DNS provider, then check again.
        </p>
      )}
      {d.status !== 'SUCCESS' && !propagating && d.status !== 'FAILED' && (
        <p>Publish the records below at your DNS provider, then check again. DNS changes can take a while to show.</p>
      )}
      <p className="muted">
        Last checked {formatRelative(d.lastCheckedTime)}
        {d.lastCheckedTime && ` (${formatDateTime(d.lastCheckedTime)})`}. Next check {when(d.nextCheckAt)}.
      </p>
      {d.errorMessage &&
        (propagating ? (
          <p className="notice notice-info" data-testid="not-seen-yet">
            Not seen yet: {d.errorMessage}
          </p>
        ) : (
          <p className="notice notice-warn">{d.errorMessage}</p>
        ))}
      {!d.errorMessage && d.verificationError && <p className="notice notice-warn">{d.verificationError}</p>}
    </div>
  );
}
