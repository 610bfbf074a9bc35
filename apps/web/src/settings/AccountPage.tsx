import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { api, setCsrfToken } from '../api/client';
import type { SignedOutEverywhere } from '../api/types';
import { sessionKey, useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime } from '../ui/format';
import { PageHeader } from '../ui/PageHeader';
import { useToast } from '../ui/toast';

export default function AccountPage() {
  const { session } = useTeam();
  const [params] = useSearchParams();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const hasPassword = session.user.hasPassword;
  const change = useMutation({
    mutationFn: () => api.post('/account/password', hasPassword ? { currentPassword: current, newPassword: next } : { newPassword: next }),
    onSuccess: async () => {
      toast({ title: 'Password saved', description: 'Your other sessions were signed out.' });
      setCurrent('');
      setNext('');
      await qc.invalidateQueries({ queryKey: sessionKey });
    },
  });
  const everywhere = useMutation({
    mutationFn: () => api.post<SignedOutEverywhere>('/auth/logout-everywhere'),
    onSuccess: () => {
      setCsrfToken(null);
      qc.clear();
      qc.setQueryData(sessionKey, null);
      navigate('/sign-in');
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    change.mutate();
  };
  return (
    <>
      <PageHeader
        title="Account"
        description={`Signed in as ${session.user.email}. This session ends ${formatDateTime(session.expiresAt)} if unused.`}
      />
      {!hasPassword && params.get('setPassword') && (
        <p className="notice notice-warn" role="status">
          Choose a password so that you can sign in with your email next time.
        </p>
      )}
      <section className="card" aria-labelledby="pw-h">
        <h2 id="pw-h">{hasPassword ? 'Change password' : 'Set a password'}</h2>
        <form className="stack narrow" onSubmit={submit}>
          {hasPassword && (
            <Field label="Current password">
              <input
                type="password"
                autoComplete="current-password"
                value={current}
                onChange={(e) => setCurrent(e.target.value)}
                required
              />
            </Field>
          )}
          <Field label="New password" hint="At least 10 characters.">
            <input type="password" autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} required />
          </Field>
          <ErrorNotice error={change.error} />
          <div>
            <button type="submit" className="btn btn-primary" disabled={change.isPending}>
              Save password
            </button>
          </div>
        </form>
      </section>
      <section className="card" aria-labelledby="sessions-h">
        <h2 id="sessions-h">Sessions</h2>
        <p className="muted">Signs out every browser where you are signed in, this one included.</p>
        <button type="button" className="btn" onClick={() => everywhere.mutate()} disabled={everywhere.isPending}>
          Sign out everywhere
        </button>
        <ErrorNotice error={everywhere.error} />
      </section>
    </>
  );
}
