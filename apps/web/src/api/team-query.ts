import { useQuery, type UseQueryOptions } from '@tanstack/react-query';
import { api } from './client';
import { useTeam } from '../session/session';

/**
 * A GET under the current team (`/api/dashboard/teams/<id><path>`), cached under
 * ['team', id, ...key] so that a team's data never shows under another team.
 */
export function useTeamQuery<T>(
  key: unknown[],
  path: string,
  query?: Parameters<typeof api.get>[1],
  opts: Partial<UseQueryOptions<T>> = {},
) {
  const { team, base } = useTeam();
  return useQuery<T>({
    queryKey: ['team', team.id, ...key, query ?? null],
    queryFn: () => api.get<T>(`${base}${path}`, query),
    ...opts,
  });
}

/** The cache key prefix of the current team's data: invalidate it after a change. */
export function teamKey(teamId: number, ...key: unknown[]) {
  return ['team', teamId, ...key];
}
