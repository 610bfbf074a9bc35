import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './client';

// A 4xx will not change by asking again (and a 401 means the session ended): only network
// failures and 5xx are retried, twice.
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      refetchOnWindowFocus: true,
      retry: (count, err) => count < 2 && (!(err instanceof ApiError) || err.status === 0 || err.status >= 500),
    },
  },
});
