import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { NavLink, Outlet, useLocation, useNavigation, useParams } from 'react-router';
import { useSession, type TeamContext } from '../session/session';
import { PageHeader } from '../ui/PageHeader';
import { TeamSwitcher } from './TeamSwitcher';
import { UserMenu } from './UserMenu';

// Only operators see it: its dialog stays out of everyone's first load.
const CreateTeamDialog = lazy(() => import('./CreateTeamDialog'));

const NAV: { to: string; label: string; adminOnly?: boolean }[] = [
  { to: '', label: 'Overview' },
  { to: 'emails', label: 'Emails' },
  { to: 'request-log', label: 'Request log' },
  { to: 'addresses', label: "Why didn't this arrive?" },
  { to: 'contact-books', label: 'Contact books' },
  { to: 'events', label: 'Events' },
  { to: 'automations', label: 'Automations' },
  { to: 'campaigns', label: 'Campaigns' },
  { to: 'templates', label: 'Templates' },
  { to: 'analytics', label: 'Analytics' },
  { to: 'domains', label: 'Domains' },
  { to: 'api-keys', label: 'API keys', adminOnly: true },
  { to: 'suppressions', label: 'Suppressions' },
  { to: 'webhooks', label: 'Webhooks' },
  { to: 'smtp', label: 'SMTP' },
  { to: 'settings', label: 'Settings' },
];

/**
 * The signed-in frame of one team's pages: navigation, team switcher, account menu. On a phone
 * (styles.css, below 760px) the sidebar is a top bar whose menu button shows them; a page opened
 * from it closes the menu, so the page is what the user sees.
 */
export function TeamLayout() {
  const session = useSession().data!;
  const teamId = Number(useParams().teamId);
  const navigation = useNavigation();
  const { pathname } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [pathname]);
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
        <div className="sidebar-top">
          <p className="brand">mailrail</p>
          <button
            type="button"
            className="menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="sidebar-menu"
            onClick={() => setMenuOpen((open) => !open)}
          >
            {menuOpen ? 'Close menu' : 'Menu'}
          </button>
        </div>
        <div id="sidebar-menu" className="sidebar-menu" data-open={menuOpen}>
          <TeamSwitcher teams={session.teams} current={team ?? null} />
          {session.user.operator && (
            <Suspense fallback={null}>
              <CreateTeamDialog />
            </Suspense>
          )}
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
                <li>
                  {/* The OpenAPI reference the API serves (Swagger UI), outside the app. */}
                  <a href="/api/v1/ui" target="_blank" rel="noopener">
                    API reference<span className="visually-hidden"> (opens in a new tab)</span>
                    <span aria-hidden="true"> ↗</span>
                  </a>
                </li>
              </ul>
            </nav>
          )}
          <UserMenu email={session.user.email} accountPath={team ? `/teams/${team.id}/account` : '/account'} />
        </div>
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
