import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api/client';
import type { TestEmailSent } from '../api/types';
import { teamKey } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';

/**
 * Sends one email from the team's verified domain to the signed-in user through the normal send
 * path; when it cannot (no verified domain...), the server's sentence says why.
 */
export function TestEmailButton() {
  const { team, base, session } = useTeam();
  const qc = useQueryClient();
  const send = useMutation({
    mutationFn: () => api.post<TestEmailSent>(`${base}/test-email`),
    onSuccess: () => qc.invalidateQueries({ queryKey: teamKey(team.id, 'email-log') }),
  });
  return (
    <div className="stack test-email">
      <div>
        <button type="button" className="btn" onClick={() => send.mutate()} disabled={send.isPending}>
          {send.isPending ? 'Sending…' : 'Send a test email'}
        </button>{' '}
        <span className="muted small">to {session.user.email}, from the team's verified domain</span>
      </div>
      <ErrorNotice error={send.error} prefix="No test email was sent" />
      {send.data && (
        <p className="notice notice-info" role="status">
          Test email queued from {send.data.from} to {send.data.to}.{' '}
          <Link to={`${base}/emails/${send.data.emailId}`}>Follow it in the email log</Link>
        </p>
      )}
    </div>
  );
}
