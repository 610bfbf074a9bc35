import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api } from '../api/client';
import type { CreatedTeam } from '../api/types';
import { sessionKey } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { useFormDialog } from '../ui/useFormDialog';

/**
 * For the instance's operators (DASHBOARD_OPERATORS; the server decides): what the admin CLI's
 * `team create` does. The operator becomes the new team's admin, and its overview opens.
 */
export default function CreateTeamDialog() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () => api.post<CreatedTeam>('/teams', { name: name.trim() }),
    toast: (team) => `Team "${team.name}" created`,
    reset: () => setName(''),
    // The session lists the new team before its pages open (else they would say "Team not found").
    onSuccess: async (team) => {
      await qc.refetchQueries({ queryKey: sessionKey });
      navigate(`/teams/${team.id}`);
    },
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-small create-team">
          Create a team
        </button>
      }
      title="Create a team"
      description="A team has its own domains, keys, contacts, campaigns and members. You become its admin and can invite others."
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Team name">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} autoComplete="off" />
        </Field>
        <ErrorNotice error={mutation.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={mutation.isPending}>
            {mutation.isPending ? 'Creating…' : 'Create team'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
