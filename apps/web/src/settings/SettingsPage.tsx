import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { TeamSettings } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { sessionKey, useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { useToast } from '../ui/toast';
import { Members } from './Members';

export default function SettingsPage() {
  const settings = useTeamQuery<TeamSettings>(['settings'], '/settings');
  return (
    <>
      <PageHeader title="Settings" description="The team's name, its members and its API request rate." />
      <ErrorNotice error={settings.error} />
      {settings.isPending && <Loading />}
      {settings.data && <TeamForm settings={settings.data} />}
      <Members />
    </>
  );
}

function TeamForm({ settings }: { settings: TeamSettings }) {
  const { team, base, isAdmin } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState(settings.name);
  const [limit, setLimit] = useState(settings.apiRateLimit === null ? '' : String(settings.apiRateLimit));
  const save = useMutation({
    mutationFn: () =>
      api.patch<TeamSettings>(`${base}/settings`, { name: name.trim(), apiRateLimit: limit.trim() === '' ? null : Number(limit) }),
    onSuccess: async () => {
      toast({ title: 'Settings saved' });
      await Promise.all([qc.invalidateQueries({ queryKey: teamKey(team.id, 'settings') }), qc.invalidateQueries({ queryKey: sessionKey })]);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const rateWords = settings.effectiveRateLimit === 0 ? 'unlimited' : `${formatNumber(settings.effectiveRateLimit)} requests per second`;
  return (
    <section className="card" aria-labelledby="team-h">
      <h2 id="team-h">Team</h2>
      {isAdmin ? (
        <form className="stack narrow" onSubmit={submit}>
          <Field label="Team name">
            <input value={name} onChange={(e) => setName(e.target.value)} required />
          </Field>
          <Field
            label="API request rate limit (per second)"
            hint={`Empty: the server default (${formatNumber(settings.defaultRateLimit)}). 0: unlimited. Now: ${rateWords}.`}
          >
            <input type="number" inputMode="numeric" value={limit} onChange={(e) => setLimit(e.target.value)} />
          </Field>
          <ErrorNotice error={save.error} />
          <div>
            <button type="submit" className="btn btn-primary" disabled={save.isPending}>
              Save
            </button>
          </div>
        </form>
      ) : (
        <dl className="fields">
          <dt>Team name</dt>
          <dd>{settings.name}</dd>
          <dt>API request rate limit</dt>
          <dd>
            {rateWords}
            {settings.apiRateLimit === null && ' (the server default)'}
          </dd>
          <dt>Your role</dt>
          <dd>Member: only admins change these settings, members and API keys.</dd>
        </dl>
      )}
    </section>
  );
}
