import type { FormEvent, ReactNode } from 'react';
import { Field } from './Field';
import { localInput } from './url-filters';

/**
 * A list page's filter form: its fields, then Apply, and Clear while a filter is set. Its fields
 * read their values from the URL (defaultValue), so the form is remounted whenever the URL's
 * filters change (a link, Back, Clear).
 */
export function FilterForm({
  label,
  params,
  onApply,
  filtered,
  onClear,
  children,
}: {
  /** The form's accessible name, e.g. "Filter emails". */
  label: string;
  params: URLSearchParams;
  onApply: (e: FormEvent<HTMLFormElement>) => void;
  filtered: boolean;
  onClear: () => void;
  children: ReactNode;
}) {
  return (
    <form className="filters card" onSubmit={onApply} key={params.toString()} aria-label={label}>
      {children}
      <div className="filter-actions">
        <button type="submit" className="btn btn-primary">
          Apply
        </button>
        {filtered && (
          <button type="button" className="btn" onClick={onClear}>
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
