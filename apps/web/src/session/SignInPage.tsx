import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, Navigate, useSearchParams } from 'react-router';
import { api } from '../api/client';
import type { Session } from '../api/types';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { AuthCard } from './AuthCard';
import { useSession, useSignedIn } from './session';

/** Only a path inside the app is a valid place to return to (no open redirect). */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export function SignInPage() {
  const [params] = useSearchParams();
  const session = useSession();
  const signedIn = useSignedIn();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation({
    mutationFn: () => api.post<Session>('/auth/login', { email, password }),
    onSuccess: signedIn,
  });
  if (session.data) return <Navigate to={safeNext(params.get('next'))} replace />;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    signIn.mutate();
  };
  return (
    <AuthCard title="Sign in to mailrail">
      <form onSubmit={submit} className="stack">
        <Field label="Email">
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Password">
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNotice error={signIn.error} />
        <button type="submit" className="btn btn-primary" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="muted small">
          <Link to="/forgot-password">Forgot your password?</Link>
        </p>
      </form>
    </AuthCard>
  );
}
