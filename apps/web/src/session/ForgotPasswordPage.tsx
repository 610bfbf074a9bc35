import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { AuthCard } from './AuthCard';

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const request = useMutation({ mutationFn: () => api.post('/auth/password-reset/request', { email }) });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    request.mutate();
  };
  return (
    <AuthCard title="Reset your password">
      {request.isSuccess ? (
        <p role="status">If an account exists for {email}, a link to set a new password is on its way. It works once.</p>
      ) : (
        <form onSubmit={submit} className="stack">
          <Field label="Email">
            <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </Field>
          <ErrorNotice error={request.error} />
          <button type="submit" className="btn btn-primary" disabled={request.isPending}>
            Email me a link
          </button>
        </form>
      )}
      <p className="muted small">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthCard>
  );
}
