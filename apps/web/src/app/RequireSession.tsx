import { Navigate, Outlet, useLocation } from 'react-router';
import { useSession } from '../session/session';
import { AuthCard } from '../session/AuthCard';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Loading } from '../ui/Loading';

/** Signed-in pages: without a session, the sign-in page, which comes back here afterwards. */
export function RequireSession() {
  const session = useSession();
  const location = useLocation();
  if (session.isPending) return <Loading />;
  if (session.isError) {
    return (
      <AuthCard title="mailrail is not reachable">
        <ErrorNotice error={session.error} />
        <button type="button" className="btn" onClick={() => session.refetch()}>
          Try again
        </button>
      </AuthCard>
    );
  }
  if (!session.data) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <Outlet />;
}

/** `/` opens the team used last (the server remembers it; the first by name for a new user). */
export function FirstTeamRedirect({ to = '' }: { to?: string }) {
  const session = useSession();
  const location = useLocation();
  const teams = session.data?.teams ?? [];
  const last = teams.find((t) => t.id === session.data?.lastTeamId) ?? teams[0];
  if (!last) {
    return (
      <AuthCard title="You are not in a team yet">
        <p>Ask an admin of your team to invite {session.data?.user.email}; the invitation email has a link to join.</p>
      </AuthCard>
    );
  }
  return <Navigate to={`/teams/${last.id}/${to}${location.search}`} replace />;
}
