import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, Navigate } from 'react-router';
import { api } from '../api/client';
import type { InvitationAccepted, InvitationLookup } from '../api/types';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { Loading } from '../ui/Loading';
import { AuthCard } from './AuthCard';
import { tokenFromHash } from './link-token';
import { useSignedIn } from './session';

/** `/invitations/accept#token=…`, from the invitation email. */
export function AcceptInvitationPage() {
  const token = tokenFromHash();
  const signedIn = useSignedIn();
  const [password, setPassword] = useState('');
  const lookup = useQuery({
    queryKey: ['invitation', token],
    queryFn: () => api.post<InvitationLookup>('/invitations/lookup', { token }),
    enabled: !!token,
    retry: false,
    staleTime: Infinity,
  });
  const accept = useMutation({
    mutationFn: () => api.post<InvitationAccepted>('/invitations/accept', lookup.data?.needsPassword ? { token, password } : { token }),
    onSuccess: (a) => {
      if (a.signedIn) signedIn(a);
    },
  });

  if (accept.data?.signedIn) return <Navigate to={`/teams/${accept.data.teamId}`} replace />;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    accept.mutate();
  };
  return (
    <AuthCard title="Join a team">
      {!token && <p role="alert">This link has no token. Open the link from your invitation email again.</p>}
      {lookup.isLoading && <Loading />}
      <ErrorNotice error={lookup.error} />
      {accept.data && !accept.data.signedIn && (
        <p role="status">
          You joined {lookup.data?.teamName}. <Link to={`/sign-in?next=/teams/${accept.data.teamId}`}>Sign in</Link> to open it.
        </p>
      )}
      {lookup.data && !accept.data && (
        <form onSubmit={submit} className="stack">
          <p>
            <strong>{lookup.data.email}</strong> is invited to <strong>{lookup.data.teamName}</strong> as{' '}
            {lookup.data.role === 'ADMIN' ? 'an admin' : 'a member'}.
          </p>
          {lookup.data.needsPassword && (
            <Field label="Choose a password" hint="At least 10 characters. You sign in with your email and this password.">
              <input type="password" autoComplete="new-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
            </Field>
          )}
          <ErrorNotice error={accept.error} />
          <button type="submit" className="btn btn-primary" disabled={accept.isPending}>
            Accept invitation
          </button>
        </form>
      )}
    </AuthCard>
  );
}
