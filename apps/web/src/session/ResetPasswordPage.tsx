import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate } from 'react-router';
import { api } from '../api/client';
import type { Session } from '../api/types';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { AuthCard } from './AuthCard';
import { tokenFromHash } from './link-token';
import { useSignedIn } from './session';

/** `/reset-password#token=…`, from the password-reset email. */
export function ResetPasswordPage() {
  const token = tokenFromHash();
  const signedIn = useSignedIn();
  const [password, setPassword] = useState('');
  const confirm = useMutation({
    mutationFn: () => api.post<Session>('/auth/password-reset/confirm', { token, password }),
    onSuccess: signedIn,
  });
  if (confirm.isSuccess) return <Navigate to="/" replace />;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    confirm.mutate();
  };
  return (
    <AuthCard title="Choose a new password">
      {!token && <p role="alert">This link has no token. Open the link from your email again.</p>}
      <form onSubmit={submit} className="stack">
        <Field label="New password" hint="At least 10 characters.">
          <input type="password" autoComplete="new-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNotice error={confirm.error} />
        <button type="submit" className="btn btn-primary" disabled={!token || confirm.isPending}>
          Set password and sign in
        </button>
      </form>
    </AuthCard>
  );
}
