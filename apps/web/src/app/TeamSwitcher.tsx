import { DropdownMenu } from 'radix-ui';
import { useLocation, useNavigate } from 'react-router';
import type { Session } from '../api/types';

/** Moves to the same page of another team (a detail page's list, since its item belongs to this team). */
export function TeamSwitcher({ teams, current }: { teams: Session['teams']; current: Session['teams'][number] | null }) {
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const section = pathname.split('/')[3] ?? '';
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger className="team-switcher" aria-label={`Team: ${current?.name ?? 'none'}. Switch team`}>
        <span className="team-name">{current?.name ?? 'Choose a team'}</span>
        {current && <span className="muted small">{current.role === 'ADMIN' ? 'Admin' : 'Member'}</span>}
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content className="menu" align="start" sideOffset={4}>
          <DropdownMenu.Label className="menu-label">Your teams</DropdownMenu.Label>
          <DropdownMenu.RadioGroup value={String(current?.id ?? '')} onValueChange={(id) => navigate(`/teams/${id}/${section}`)}>
            {teams.map((t) => (
              <DropdownMenu.RadioItem key={t.id} value={String(t.id)} className="menu-item">
                <DropdownMenu.ItemIndicator className="menu-indicator">✓</DropdownMenu.ItemIndicator>
                {t.name} <span className="muted small">{t.role === 'ADMIN' ? 'Admin' : 'Member'}</span>
              </DropdownMenu.RadioItem>
            ))}
          </DropdownMenu.RadioGroup>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
