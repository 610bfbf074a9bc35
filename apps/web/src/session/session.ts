import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useOutletContext } from 'react-router';
import { api, ApiError, setCsrfToken } from '../api/client';
import type { Role, Session } from '../api/types';

export const sessionKey = ['session'] as const;

/** The signed-in user, their teams and the CSRF token; `null` when signed out (401). */
export function useSession() {
  return useQuery({
    queryKey: sessionKey,
    queryFn: async (): Promise<Session | null> => {
      try {
        const s = await api.get<Session>('/session');
        setCsrfToken(s.csrfToken);
        return s;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) {
          setCsrfToken(null);
          return null;
        }
        throw err;
      }
    },
    staleTime: 60_000,
  });
}

/** Every sign-in route answers with the session: store it so the app switches to signed-in at once. */
export function useSignedIn() {
  const qc = useQueryClient();
  return (s: Session) => {
    setCsrfToken(s.csrfToken);
    qc.removeQueries({ predicate: (q) => q.queryKey[0] !== sessionKey[0] });
    qc.setQueryData(sessionKey, s);
  };
}

export function useSignOut() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => api.post<{ success: true }>('/auth/logout'),
    onSuccess: () => {
      setCsrfToken(null);
      qc.clear();
      qc.setQueryData(sessionKey, null);
    },
  });
}

export interface TeamContext {
  session: Session;
  team: { id: number; name: string; role: Role };
  isAdmin: boolean;
  /** The team's route prefix for API calls: `/teams/<id>`. */
  base: string;
}

/** The team of the current /teams/:teamId page (set by TeamLayout). */
export function useTeam(): TeamContext {
  return useOutletContext<TeamContext>();
}
