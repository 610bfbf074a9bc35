import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, downloadUrl } from '../api/client';
import type { ImportTarget } from '@mailrail/domain/audience/imports/csv-mapping';
import type { ContactBook, ContactImport, ImportPreview, PropertyType } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime, formatNumber } from '../ui/format';
import { StatusBadge } from '../ui/StatusBadge';
import { DataTable } from '../ui/DataTable';
import { PROPERTY_TYPE_LABELS, useContactProperties } from './useContactProperties';

// The server guesses the mapping from the file's first 64 KB (read here with File.slice, so a
// 1,000,000-row file is not read into the page) and runs the import as a background job; this
// tab only shows what the server answers.
const PREVIEW_BYTES = 64 * 1024;
const ACTIVE = new Set<ContactImport['status']>(['queued', 'running']);
const STATUS_TONE: Record<ContactImport['status'], string> = { queued: 'QUEUED', running: 'SENT', completed: 'SUCCESS', failed: 'FAILED' };

/** The first 64 KB as text, cut at the last line break so no row (or UTF-8 character) is cut in half. */
async function head(file: File): Promise<string> {
  const text = await file.slice(0, PREVIEW_BYTES).text();
  if (file.size <= PREVIEW_BYTES) return text;
  const lastBreak = text.lastIndexOf('\n');
  return lastBreak > 0 ? text.slice(0, lastBreak + 1) : text;
}

export function ImportTab({ book }: { book: ContactBook }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const bookPath = `${base}/v1/contactBooks/${book.id}`;
  const [file, setFile] = useState<File | null>(null);
  const [mapping, setMapping] = useState<Record<string, ImportTarget>>({});
  // Header → the type the user confirmed (the server's suggestion, or the registered type of a known property).
  const [types, setTypes] = useState<Record<string, PropertyType>>({});
  const registry = useContactProperties(book.id);
  const [onExisting, setOnExisting] = useState<'skip' | 'update'>('skip');
  const [current, setCurrent] = useState<string | null>(null);
  const [inputKey, setInputKey] = useState(0); // a new file input (empty) after an upload
  const preview = useMutation({
    mutationFn: async (f: File) => api.postRaw<ImportPreview>(`${bookPath}/imports/preview`, await head(f), 'text/csv'),
    onSuccess: (p) => {
      // The document types a target as a string; the server's guesses are ImportTargets.
      setMapping(p.mapping as Record<string, ImportTarget>);
      const registered = new Map(registry.properties.map((r) => [r.name.toLowerCase(), r.type]));
      setTypes(
        Object.fromEntries(
          p.headers.map((h) => {
            const target = p.mapping[h] ?? '';
            const known = target.startsWith('properties.') ? registered.get(target.slice(11).toLowerCase()) : undefined;
            return [h, known ?? p.types[h] ?? 'string'];
          }),
        ),
      );
    },
  });
  const upload = useMutation({
    mutationFn: () => {
      const form = new FormData();
      form.append('mapping', JSON.stringify(mapping));
      // The confirmed type of each column mapped to a property, by the property's name.
      const propertyTypes = Object.fromEntries(
        Object.entries(mapping)
          .filter(([, t]) => t.startsWith('properties.'))
          .map(([h, t]) => [t.slice(11), types[h] ?? 'string']),
      );
      form.append('propertyTypes', JSON.stringify(propertyTypes));
      form.append('onExisting', onExisting);
      form.append('file', file!); // last: the server may stream the file once the fields are read
      return api.postRaw<ContactImport>(`${bookPath}/imports`, form);
    },
    onSuccess: async (imp) => {
      setCurrent(imp.id);
      setFile(null);
      setInputKey((k) => k + 1);
      preview.reset();
      await qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books', book.id, 'imports') });
    },
  });
  const imports = useTeamQuery<ContactImport[]>(['contact-books', book.id, 'imports'], `/v1/contactBooks/${book.id}/imports`);
  const onFile = (f: File | null) => {
    setFile(f);
    upload.reset();
    if (f) preview.mutate(f);
    else preview.reset();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    upload.mutate();
  };
  const targets = (header: string): ImportTarget[] => {
    const own: ImportTarget[] = [
      'ignore',
      'email',
      'firstName',
      'lastName',
      'subscribed',
      ...book.variables.map((v) => `properties.${v}` as const),
    ];
    const guess = mapping[header];
    const asProperty = `properties.${header.trim().replace(/[^a-zA-Z0-9_]/g, '_')}` as const;
    return [...new Set<ImportTarget>([...own, asProperty, ...(guess ? [guess] : [])])];
  };
  return (
    <>
      {current && <ImportProgress book={book} importId={current} />}
      <form className="card stack form-card" onSubmit={submit} aria-labelledby="import-h">
        <h2 id="import-h">Import a CSV file</h2>
        <Field
          label="CSV file"
          hint="UTF-8, with a header row; up to 1,000,000 rows. Invalid rows are reported, they never stop the import."
        >
          <input key={inputKey} type="file" accept=".csv,text/csv" onChange={(e) => onFile(e.target.files?.[0] ?? null)} />
        </Field>
        <ErrorNotice error={preview.error} />
        {preview.isPending && <p className="muted">Reading the first rows…</p>}
        {preview.data && file && (
          <>
            <p className="muted">
              Check each property's type: numbers compare as numbers and dates as dates in segments. The type shown is what the first rows
              suggest.
            </p>
            <div className="table-wrap">
              <table className="import-mapping">
                <caption className="visually-hidden">Columns of {file.name} and where they go</caption>
                <thead>
                  <tr>
                    <th scope="col">Column</th>
                    <th scope="col">First values</th>
                    <th scope="col">Import as</th>
                    <th scope="col">Type</th>
                  </tr>
                </thead>
                <tbody>
                  {preview.data.headers.map((h, i) => (
                    <tr key={`${h}-${i}`}>
                      <th scope="row">{h}</th>
                      <td className="truncate muted">
                        {preview.data.sample
                          .map((row) => row[i] ?? '')
                          .filter(Boolean)
                          .slice(0, 3)
                          .join(', ')}
                      </td>
                      <td>
                        <select
                          aria-label={`Import column ${h} as`}
                          value={mapping[h] ?? 'ignore'}
                          onChange={(e) => setMapping({ ...mapping, [h]: e.target.value as ImportTarget })}
                        >
                          {targets(h).map((t) => (
                            <option key={t} value={t}>
                              {t === 'ignore' ? 'do not import' : t.startsWith('properties.') ? `property ${t.slice(11)}` : t}
                            </option>
                          ))}
                        </select>
                      </td>
                      <td>
                        {mapping[h]?.startsWith('properties.') ? (
                          <select
                            aria-label={`Type of column ${h}`}
                            value={types[h] ?? 'string'}
                            onChange={(e) => setTypes({ ...types, [h]: e.target.value as PropertyType })}
                          >
                            {(Object.keys(PROPERTY_TYPE_LABELS) as PropertyType[]).map((t) => (
                              <option key={t} value={t}>
                                {PROPERTY_TYPE_LABELS[t]}
                                {t === preview.data.types[h] && t !== 'string' ? ' (detected)' : ''}
                              </option>
                            ))}
                          </select>
                        ) : (
                          <span className="muted">—</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <fieldset className="radio-group">
              <legend>Contacts already in the book</legend>
              <label>
                <input type="radio" name="onExisting" checked={onExisting === 'skip'} onChange={() => setOnExisting('skip')} /> Skip them
                (keep what the book has)
              </label>
              <label>
                <input type="radio" name="onExisting" checked={onExisting === 'update'} onChange={() => setOnExisting('update')} /> Update
                them from the file
              </label>
            </fieldset>
            <ErrorNotice error={upload.error} />
            <div>
              <button type="submit" className="btn btn-primary" disabled={upload.isPending}>
                {upload.isPending ? 'Uploading…' : `Import ${file.name}`}
              </button>
            </div>
          </>
        )}
      </form>
      <section aria-labelledby="imports-h">
        <h2 id="imports-h">Past imports</h2>
        <ErrorNotice error={imports.error} />
        {imports.data?.length === 0 && <p className="muted">No imports yet.</p>}
        {!!imports.data?.length && (
          <DataTable
            caption={<>Imports into {book.name}, newest first</>}
            columns={[
              'File',
              'Status',
              { label: 'Rows', numeric: true },
              { label: 'Created', numeric: true },
              { label: 'Updated', numeric: true },
              { label: 'Rejected', numeric: true },
              'Started',
            ]}
          >
            {imports.data.map((i) => (
              <tr key={i.id}>
                <td className="truncate">{i.fileName}</td>
                <td>
                  <StatusBadge status={STATUS_TONE[i.status]} label={i.status} />
                </td>
                <td className="num">{formatNumber(i.rowsRead)}</td>
                <td className="num">{formatNumber(i.created)}</td>
                <td className="num">{formatNumber(i.updated)}</td>
                <td className="num">
                  {i.rejected > 0 ? <a href={downloadUrl(`${bookPath}/imports/${i.id}/rejects`)}>{formatNumber(i.rejected)}</a> : 0}
                </td>
                <td>{formatDateTime(i.startedAt ?? i.createdAt)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
    </>
  );
}

/** One import's figures, polled every second while it is queued or running. */
function ImportProgress({ book, importId }: { book: ContactBook; importId: string }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const imp = useTeamQuery<ContactImport>(
    ['contact-books', book.id, 'imports', importId],
    `/v1/contactBooks/${book.id}/imports/${importId}`,
    undefined,
    {
      refetchInterval: (q) => (ACTIVE.has((q.state.data as ContactImport | undefined)?.status ?? 'queued') ? 1000 : false),
    },
  );
  // Once finished, the book's counts and the list of imports changed: refetched once (not this
  // import's own query, which would start the loop again).
  const finished = !!imp.data && !ACTIVE.has(imp.data.status);
  useEffect(() => {
    if (!finished) return;
    void qc.invalidateQueries({
      queryKey: teamKey(team.id, 'contact-books'),
      predicate: (q) => !(q.queryKey.includes('imports') && q.queryKey.includes(importId)),
    });
  }, [finished, qc, team.id, importId]);
  const i = imp.data;
  return (
    <section className="card card-accent" aria-labelledby="import-progress-h">
      <h2 id="import-progress-h">Import {i ? `of ${i.fileName}` : ''}</h2>
      <ErrorNotice error={imp.error} />
      {i && (
        <>
          <p>
            <StatusBadge status={STATUS_TONE[i.status]} label={i.status} />
            {ACTIVE.has(i.status) && <progress aria-label="Import running" className="import-progress" />}
          </p>
          <dl className="fields" data-testid="import-figures">
            <dt>Rows read</dt>
            <dd>{formatNumber(i.rowsRead)}</dd>
            <dt>Created</dt>
            <dd>{formatNumber(i.created)}</dd>
            <dt>Updated</dt>
            <dd>{formatNumber(i.updated)}</dd>
            <dt>Skipped</dt>
            <dd>{formatNumber(i.skipped)}</dd>
            <dt>Rejected</dt>
            <dd>{formatNumber(i.rejected)}</dd>
            <dt>Suppressed</dt>
            <dd>{formatNumber(i.suppressed)}</dd>
          </dl>
          {i.suppressed > 0 && (
            <p className="small">
              {i.suppressed === 1 ? '1 imported address is' : `${formatNumber(i.suppressed)} imported addresses are`} on your{' '}
              <Link to={`${base}/suppressions`}>suppression list</Link>:{' '}
              {i.suppressed === 1
                ? 'it is in the book, but no email will reach it.'
                : 'they are in the book, but no email will reach them.'}
            </p>
          )}
          {i.error && <p className="notice notice-error">{i.error}</p>}
          {i.rejected > 0 && !ACTIVE.has(i.status) && (
            <p>
              <a href={downloadUrl(`${base}/v1/contactBooks/${book.id}/imports/${i.id}/rejects`)} download>
                Download the {formatNumber(i.rejected)} rejected rows (CSV with line numbers and reasons)
              </a>
            </p>
          )}
        </>
      )}
    </section>
  );
}
