import type { TeamSegment } from './useNames';

/** A select of the team's segments, grouped by contact book; an id not among them (deleted since) stays choosable as itself. */
export function SegmentSelect({
  value,
  segments,
  onChange,
  ...aria
}: {
  value: string;
  segments: TeamSegment[];
  onChange: (segmentId: string) => void;
  id?: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}) {
  const books = [...new Set(segments.map((s) => s.bookName))];
  return (
    <select {...aria} value={value} onChange={(e) => onChange(e.target.value)} required>
      <option value="">{segments.length ? 'Choose a segment…' : 'No segments yet (create one in a contact book)'}</option>
      {books.map((book) => (
        <optgroup key={book} label={`Book: ${book}`}>
          {segments
            .filter((s) => s.bookName === book)
            .map(({ segment }) => (
              <option key={segment.id} value={segment.id}>
                {segment.name}
              </option>
            ))}
        </optgroup>
      ))}
      {value && !segments.some((s) => s.segment.id === value) && <option value={value}>{value}</option>}
    </select>
  );
}
