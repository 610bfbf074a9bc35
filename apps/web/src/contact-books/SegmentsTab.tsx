import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { ContactBook, Segment, SegmentFilter } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { useToast } from '../ui/toast';
import { emptyFilter, filterProblems, SegmentBuilder, SegmentLivePreview, useSegmentPreview } from './SegmentBuilder';
import { DataTable } from '../ui/DataTable';

/** Saved filters over this book: the list, and the builder for a new or an existing one. */
export function SegmentsTab({ book }: { book: ContactBook }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const segments = useTeamQuery<Segment[]>(['contact-books', book.id, 'segments'], `/v1/contactBooks/${book.id}/segments`);
  const [editing, setEditing] = useState<Segment | 'new' | null>(null);
  if (editing) return <SegmentEditor book={book} segment={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />;
  return (
    <>
      <div className="section-head">
        <p className="muted">A segment is a saved filter; a campaign can send to its subscribed contacts instead of the whole book.</p>
        <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
          New segment
        </button>
      </div>
      <ErrorNotice error={segments.error} />
      {segments.isPending && <Loading />}
      {segments.data?.length === 0 && (
        <EmptyState title="No segments yet">
          <p>Build one from conditions on the contacts' fields and properties, with a live count.</p>
        </EmptyState>
      )}
      {!!segments.data?.length && (
        <DataTable caption={<>Segments of {book.name}</>} columns={['Name', 'Conditions', 'Updated', { label: 'Actions', hidden: true }]}>
          {segments.data.map((s) => (
            <tr key={s.id}>
              <td>{s.name}</td>
              <td>
                {s.filter.conditions.length} ({s.filter.match === 'all' ? 'all of them' : 'any of them'})
              </td>
              <td>{formatDateTime(s.updatedAt)}</td>
              <td className="row-actions">
                <button type="button" className="btn btn-small" onClick={() => setEditing(s)} aria-label={`Edit segment ${s.name}`}>
                  Edit
                </button>{' '}
                <ConfirmDialog
                  trigger={
                    <button type="button" className="btn btn-small btn-danger" aria-label={`Delete segment ${s.name}`}>
                      Delete
                    </button>
                  }
                  title={`Delete the segment "${s.name}"?`}
                  description={
                    <p>Its contacts stay in the book. A scheduled or running campaign using it keeps it (the server refuses).</p>
                  }
                  confirmLabel="Delete segment"
                  onConfirm={async () => {
                    await api.delete(`${base}/v1/contactBooks/${book.id}/segments/${s.id}`);
                    toast({ title: `Segment "${s.name}" deleted` });
                    await qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books', book.id, 'segments') });
                  }}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function SegmentEditor({ book, segment, onDone }: { book: ContactBook; segment: Segment | null; onDone: () => void }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState(segment?.name ?? '');
  const [filter, setFilter] = useState<SegmentFilter>(segment?.filter ?? emptyFilter());
  const save = useMutation({
    mutationFn: () =>
      segment
        ? api.patch<Segment>(`${base}/v1/contactBooks/${book.id}/segments/${segment.id}`, { name: name.trim(), filter })
        : api.post<Segment>(`${base}/v1/contactBooks/${book.id}/segments`, { name: name.trim(), filter }),
    onSuccess: async (s) => {
      toast({ title: `Segment "${s.name}" saved` });
      await qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books', book.id, 'segments') });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const preview = useSegmentPreview(book, filter);
  // A refused filter shows at its conditions; other errors (the name, a segment in use) here.
  const saveProblems = filterProblems(save.error);
  const filterRefused = saveProblems.byCondition.size > 0 || saveProblems.rest.length > 0;
  return (
    <form className="segment-editor" onSubmit={submit} aria-label={segment ? `Edit segment ${segment.name}` : 'New segment'}>
      <div className="stack">
        <Field label="Segment name">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} autoComplete="off" />
        </Field>
        <SegmentBuilder
          book={book}
          filter={filter}
          onChange={(f) => {
            setFilter(f);
            save.reset(); // its issues name conditions by position, which an edit may move
          }}
          error={save.error ?? preview.error}
        />
        {!filterRefused && <ErrorNotice error={save.error} />}
        <div className="filter-actions">
          <button type="submit" className="btn btn-primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : 'Save segment'}
          </button>
          <button type="button" className="btn" onClick={onDone}>
            Cancel
          </button>
        </div>
      </div>
      <SegmentLivePreview preview={preview} />
    </form>
  );
}
