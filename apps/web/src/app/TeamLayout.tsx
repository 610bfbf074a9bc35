import { useMemo } from 'react';
import { NavLink, Outlet, useNavigation, useParams } from 'react-router';
import { useSession, type TeamContext } from '../session/session';
import { PageHeader } from '../ui/PageHeader';
import { TeamSwitcher } from './TeamSwitcher';
import { UserMenu } from './UserMenu';

const NAV: { to: string; label: string; adminOnly?: boolean }[] = [
  { to: '', label: 'Overview' },
  { to: 'emails', label: 'Emails' },
  { to: 'addresses', label: "Why didn't this arrive?" },
  { to: 'contact-books', label: 'Contact books' },
  { to: 'campaigns', label: 'Campaigns' },
  { to: 'analytics', label: 'Analytics' },
  { to: 'domains', label: 'Domains' },
  { to: 'api-keys', label: 'API keys', adminOnly: true },
  { to: 'suppressions', label: 'Suppressions' },
  { to: 'webhooks', label: 'Webhooks' },
  { to: 'settings', label: 'Settings' },
];

/** The signed-in frame of one team's pages: navigation, team switcher, account menu. */
export function TeamLayout() {
  const session = useSession().data!;
  const teamId = Number(useParams().teamId);
  const navigation = useNavigation();
  const team = session.teams.find((t) => t.id === teamId);
  const ctx = useMemo<TeamContext | null>(
    () => (team ? { session, team, isAdmin: team.role === 'ADMIN', base: `/teams/${team.id}` } : null),
    [session, team],
  );

  return (
    <div className="shell">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <aside className="sidebar">
        <p className="brand">mailrail</p>
        <TeamSwitcher teams={session.teams} current={team ?? null} />
        {team && (
          <nav aria-label="Main">
            <ul>
              {NAV.filter((n) => !n.adminOnly || team.role === 'ADMIN').map((n) => (
                <li key={n.to}>
                  <NavLink to={`/teams/${team.id}/${n.to}`} end={n.to === ''}>
                    {n.label}
                  </NavLink>
                </li>
              ))}
            </ul>
          </nav>
        )}
        <UserMenu email={session.user.email} accountPath={team ? `/teams/${team.id}/account` : '/account'} />
      </aside>
      <main id="content" className="content" tabIndex={-1} aria-busy={navigation.state === 'loading'}>
        {navigation.state === 'loading' && <div className="route-progress" aria-hidden="true" />}
        {ctx ? (
          <Outlet context={ctx} />
        ) : (
          <PageHeader
            title="Team not found"
            description="This team does not exist or you are not a member of it. Pick one of your teams from the menu."
          />
        )}
      </main>
    </div>
  );
}
