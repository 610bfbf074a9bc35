import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Link, Navigate } from 'react-router';
import { api } from '../api/client';
import type { Session } from '../api/types';
import { ErrorNotice } from '../ui/ErrorNotice';
import { AuthCard } from './AuthCard';
import { tokenFromHash } from './link-token';
import { useSignedIn } from './session';

/** `/sign-in/link#token=…`: the one-time link the admin CLI prints. */
export function SignInLinkPage() {
  const signedIn = useSignedIn();
  const token = tokenFromHash();
  const use = useMutation({ mutationFn: (t: string) => api.post<Session>('/auth/link', { token: t }), onSuccess: signedIn });
  const { mutate } = use;
  // A link works once: React's development double effect must not spend it twice.
  const sent = useRef(false);
  useEffect(() => {
    if (token && !sent.current) {
      sent.current = true;
      mutate(token);
    }
  }, [token, mutate]);

  if (use.data) return <Navigate to={use.data.user.hasPassword ? '/' : '/account?setPassword=1'} replace />;
  return (
    <AuthCard title="Signing you in">
      {!token && <p role="alert">This link has no token. Open the link from your email or the CLI again.</p>}
      {use.isPending && <p>Checking the link…</p>}
      <ErrorNotice error={use.error} />
      {use.isError && <Link to="/sign-in">Go to sign in</Link>}
    </AuthCard>
  );
}
