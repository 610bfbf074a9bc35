import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client';
import type { Invitation, Member, Role } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { sessionKey, useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { useFormDialog } from '../ui/useFormDialog';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { StatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';

const ROLES: Role[] = ['MEMBER', 'ADMIN'];

export function Members() {
  const { team, base, isAdmin, session } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const members = useTeamQuery<{ data: Member[] }>(['members'], '/members');
  const invitations = useTeamQuery<{ data: Invitation[] }>(['invitations'], '/invitations');
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: teamKey(team.id) }), qc.invalidateQueries({ queryKey: sessionKey })]);
  const setRole = useMutation({
    mutationFn: ({ userId, role }: { userId: number; role: Role }) => api.patch<Member>(`${base}/members/${userId}`, { role }),
    onSuccess: (m) => (toast({ title: `${m.email} is now ${m.role === 'ADMIN' ? 'an admin' : 'a member'}` }), refresh()),
  });
  return (
    <>
      <section className="card" aria-labelledby="members-h">
        <div className="section-head">
          <h2 id="members-h">Members</h2>
          {isAdmin && <Invite />}
        </div>
        <ErrorNotice error={members.error} />
        <ErrorNotice error={setRole.error} />
        {members.isPending && <Loading />}
        {!!members.data?.data.length && (
          <div className="table-wrap">
            <table className="list">
              <caption className="visually-hidden">Members of {team.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Joined</th>
                  {isAdmin && (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {members.data.data.map((m) => (
                  <tr key={m.userId}>
                    <td>
                      {m.email}
                      {m.userId === session.user.id && <span className="muted small"> (you)</span>}
                    </td>
                    <td>
                      {isAdmin ? (
                        <select
                          aria-label={`Role of ${m.email}`}
                          value={m.role}
                          disabled={setRole.isPending}
                          onChange={(e) => setRole.mutate({ userId: m.userId, role: e.target.value as Role })}
                        >
                          {ROLES.map((r) => (
                            <option key={r} value={r}>
                              {r === 'ADMIN' ? 'Admin' : 'Member'}
                            </option>
                          ))}
                        </select>
                      ) : (
                        <StatusBadge status={m.role} />
                      )}
                    </td>
                    <td>{formatDateTime(m.joinedAt)}</td>
                    {isAdmin && (
                      <td className="row-actions">
                        <ConfirmDialog
                          trigger={
                            <button type="button" className="btn btn-small btn-danger" aria-label={`Remove ${m.email} from the team`}>
                              Remove
                            </button>
                          }
                          title={`Remove ${m.email} from ${team.name}?`}
                          description={<p>Their access to this team ends at once. They keep their account and their other teams.</p>}
                          confirmLabel="Remove member"
                          onConfirm={async () => {
                            await api.delete(`${base}/members/${m.userId}`);
                            toast({ title: `${m.email} removed` });
                            await refresh();
                          }}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section className="card" aria-labelledby="invitations-h">
        <h2 id="invitations-h">Pending invitations</h2>
        <ErrorNotice error={invitations.error} />
        {invitations.data?.data.length === 0 && (
          <p className="muted">{isAdmin ? 'No pending invitations. Invite someone with the button above.' : 'No pending invitations.'}</p>
        )}
        {!!invitations.data?.data.length && (
          <div className="table-wrap">
            <table className="list">
              <caption className="visually-hidden">Pending invitations</caption>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Invited by</th>
                  <th scope="col">Expires</th>
                  {isAdmin && (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {invitations.data.data.map((i) => (
                  <tr key={i.id}>
                    <td>{i.email}</td>
                    <td>
                      <StatusBadge status={i.role} />
                    </td>
                    <td>{i.invitedBy ?? '—'}</td>
                    <td>{i.expired ? <span className="tone-bad">expired</span> : formatDateTime(i.expiresAt)}</td>
                    {isAdmin && (
                      <td className="row-actions">
                        <ConfirmDialog
                          trigger={
                            <button type="button" className="btn btn-small" aria-label={`Revoke the invitation of ${i.email}`}>
                              Revoke
                            </button>
                          }
                          title={`Revoke the invitation of ${i.email}?`}
                          description={<p>The link in their email stops working.</p>}
                          confirmLabel="Revoke invitation"
                          onConfirm={async () => {
                            await api.delete(`${base}/invitations/${i.id}`);
                            await refresh();
                          }}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

function Invite() {
  const { team, base } = useTeam();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('MEMBER');
  const {
    mutation: invite,
    submit,
    dialog,
  } = useFormDialog({
    mutationFn: () => api.post<Invitation>(`${base}/invitations`, { email: email.trim(), role }),
    toast: (i) => `Invitation sent to ${i.email}`,
    invalidate: [teamKey(team.id, 'invitations')],
    reset: () => setEmail(''),
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Invite member
        </button>
      }
      title={`Invite someone to ${team.name}`}
      description="They get an email with a link to join; it works once."
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Email address">
          <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="off" />
        </Field>
        <Field label="Role" hint="Admins also manage members, invitations, API keys and team settings.">
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r === 'ADMIN' ? 'Admin' : 'Member'}
              </option>
            ))}
          </select>
        </Field>
        <ErrorNotice error={invite.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={invite.isPending}>
            {invite.isPending ? 'Sending…' : 'Send invitation'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
