import { useState } from 'react';
import { downloadUrl } from '../api/client';
import type { ContactBook, Segment } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';

/** A plain download link: the server streams the CSV, so a book of any size exports in bounded memory. */
export function ExportTab({ book }: { book: ContactBook }) {
  const { base } = useTeam();
  const segments = useTeamQuery<Segment[]>(['contact-books', book.id, 'segments'], `/v1/contactBooks/${book.id}/segments`);
  const [segmentId, setSegmentId] = useState('');
  const segment = segments.data?.find((s) => s.id === segmentId);
  return (
    <div className="card stack form-card narrow-wide">
      <h2>Export as CSV</h2>
      <p className="muted">Columns: email, firstName, lastName, subscribed, createdAt, then one column per property.</p>
      <ErrorNotice error={segments.error} prefix="The segments could not be loaded" />
      <Field label="Contacts to export">
        <select value={segmentId} onChange={(e) => setSegmentId(e.target.value)}>
          <option value="">The whole book</option>
          {segments.data?.map((s) => (
            <option key={s.id} value={s.id}>
              Segment: {s.name}
            </option>
          ))}
        </select>
      </Field>
      <p>
        <a className="btn btn-primary" href={downloadUrl(`${base}/v1/contactBooks/${book.id}/contacts/export`, { segmentId })} download>
          Download {segment ? `segment "${segment.name}"` : `"${book.name}"`}
        </a>
      </p>
    </div>
  );
}
