import { useEffect, useState, type FormEvent } from 'react';
import { ApiError } from '../api/client';
import type { ContactBook, ContactProperty, PropertyType } from '../api/types';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Loading } from '../ui/Loading';
import { useToast } from '../ui/toast';
import { PROPERTY_TYPE_LABELS, useContactProperties, useSaveContactProperties } from './useContactProperties';

const TYPES = Object.keys(PROPERTY_TYPE_LABELS) as PropertyType[];

/** The server's message for one entry's field (`properties.<i>.<field>`), if it named one. */
function issueAt(error: unknown, index: number, field: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  return error.issues.find((i) => i.path[0] === 'properties' && i.path[1] === index && i.path[2] === field)?.message;
}

/** The book's typed properties: add, rename, retype, set fallbacks, remove; saved as a whole (PUT). */
export function PropertiesTab({ book }: { book: ContactBook }) {
  const toast = useToast();
  const registry = useContactProperties(book.id);
  const save = useSaveContactProperties(book.id);
  const [rows, setRows] = useState<ContactProperty[] | null>(null);
  useEffect(() => {
    if (registry.data && rows === null) setRows(registry.data.properties);
  }, [registry.data, rows]);
  const set = (i: number, patch: Partial<ContactProperty>) => setRows((r) => r!.map((p, k) => (k === i ? { ...p, ...patch } : p)));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(
      rows!.map((p) => ({ ...p, fallback: p.fallback?.trim() ? p.fallback : null })),
      { onSuccess: (res) => (setRows(res.properties), toast({ title: 'Properties saved' })) },
    );
  };
  const placed =
    save.error instanceof ApiError && save.error.issues.some((i) => i.path[0] === 'properties' && typeof i.path[1] === 'number');
  return (
    <form className="card stack form-card" onSubmit={submit} aria-labelledby="properties-h">
      <h2 id="properties-h">Properties</h2>
      <p className="muted">
        Each property has a type: numbers compare as numbers and dates as dates in segments, and the contact list shows one column per
        property. The fallback is written in an email for a contact without the value. Imports add the columns they map to properties.
      </p>
      <ErrorNotice error={registry.error} />
      {rows === null && <Loading />}
      {rows?.length === 0 && <p className="muted">No properties yet: import a CSV file or add one here.</p>}
      {rows?.map((p, i) => {
        const nameError = issueAt(save.error, i, 'name');
        const fallbackError = issueAt(save.error, i, 'fallback');
        return (
          <div key={i} className="property-row" role="group" aria-label={`Property ${i + 1}`}>
            <label className="field">
              <span className="field-label">Name</span>
              <input
                value={p.name}
                maxLength={128}
                required
                aria-invalid={nameError ? true : undefined}
                aria-describedby={nameError ? `property-${i}-name-error` : undefined}
                onChange={(e) => set(i, { name: e.target.value })}
              />
              {nameError && (
                <span className="field-error" id={`property-${i}-name-error`}>
                  {nameError}
                </span>
              )}
            </label>
            <label className="field">
              <span className="field-label">Type</span>
              <select value={p.type} onChange={(e) => set(i, { type: e.target.value as PropertyType })}>
                {TYPES.map((t) => (
                  <option key={t} value={t}>
                    {PROPERTY_TYPE_LABELS[t]}
                  </option>
                ))}
              </select>
            </label>
            <label className="field">
              <span className="field-label">Fallback</span>
              <input
                value={p.fallback ?? ''}
                maxLength={1000}
                aria-invalid={fallbackError ? true : undefined}
                onChange={(e) => set(i, { fallback: e.target.value })}
              />
              {fallbackError && <span className="field-error">{fallbackError}</span>}
            </label>
            <button
              type="button"
              className="btn btn-small"
              aria-label={`Remove property ${p.name || i + 1}`}
              onClick={() => setRows((r) => r!.filter((_, k) => k !== i))}
            >
              Remove
            </button>
          </div>
        );
      })}
      {!placed && <ErrorNotice error={save.error} />}
      {rows && (
        <div className="filter-actions">
          <button type="button" className="btn" onClick={() => setRows((r) => [...r!, { name: '', type: 'string', fallback: null }])}>
            Add property
          </button>
          <button type="submit" className="btn btn-primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : 'Save properties'}
          </button>
        </div>
      )}
    </form>
  );
}
