import type { FormEvent, ReactNode } from 'react';
import { Field } from './Field';
import { localInput } from './url-filters';

/**
 * A list page's filter form: its fields, then Apply, and Clear while a filter is set. Its fields
 * read their values from the URL (defaultValue), so the form is remounted whenever the URL's
 * filters change (a link, Back, Clear).
 */
/** What the form needs of a page's URL filters (useUrlFilters). */
export interface FilterFormState {
  params: URLSearchParams;
  filtered: boolean;
  applyFilters: (e: FormEvent<HTMLFormElement>) => void;
  clearFilters: () => void;
}

export function FilterForm({
  label,
  filters: { params, filtered, applyFilters, clearFilters },
  children,
}: {
  /** The form's accessible name, e.g. "Filter emails". */
  label: string;
  filters: FilterFormState;
  children: ReactNode;
}) {
  return (
    <form className="filters card" onSubmit={applyFilters} key={params.toString()} aria-label={label}>
      {children}
      <div className="filter-actions">
        <button type="submit" className="btn btn-primary">
          Apply
        </button>
        {filtered && (
          <button type="button" className="btn" onClick={clearFilters}>
            Clear
          </button>
        )}
      </div>
    </form>
  );
}

/** From and Before as local date-times, the URL's startDate and endDate (instants). */
export function TimeRangeFields({ params }: { params: URLSearchParams }) {
  return (
    <>
      <Field label="From">
        <input type="datetime-local" name="startDate" defaultValue={localInput(params.get('startDate'))} />
      </Field>
      <Field label="Before">
        <input type="datetime-local" name="endDate" defaultValue={localInput(params.get('endDate'))} />
      </Field>
    </>
  );
}
