import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { toLocalInput } from './format';

// A list page's filters kept in the URL (so another page can link to it filtered), with keyset
// paging that starts again at page 1 whenever the filters change. The time filters are named
// startDate and endDate: a datetime-local input in the browser's zone, an ISO instant in the URL.

/** A datetime-local value (the browser's zone) as an ISO instant, or the URL's ISO instant as it is. */
export function instant(value: string | null): string | undefined {
  if (!value) return undefined;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** The URL's instant as a datetime-local input shows it, in the browser's zone. */
export const localInput = (value: string | null) => (instant(value) ? toLocalInput(value!) : '');

const isTimeFilter = (name: string) => name === 'startDate' || name === 'endDate';

export function useUrlFilters(filters: readonly string[]) {
  const [params, setParams] = useSearchParams();
  const [cursors, setCursors] = useState<string[]>([]);
  const setFilters = (next: URLSearchParams) => {
    setCursors([]);
    setParams(next);
  };
  /** The filter form's submit: its named fields, trimmed, into the URL. */
  const applyFilters = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const next = new URLSearchParams();
    for (const f of filters) {
      const v = String(form.get(f) ?? '').trim();
      if (v) next.set(f, isTimeFilter(f) ? (instant(v) ?? v) : v);
    }
    setFilters(next);
  };
  return {
    params,
    /** The current page's cursor (undefined: page 1), and the pages before it. */
    cursor: cursors.at(-1),
    cursors,
    setCursors,
    filtered: filters.some((f) => params.get(f)),
    setFilters,
    applyFilters,
    clearFilters: () => setFilters(new URLSearchParams()),
  };
}
