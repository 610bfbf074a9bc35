/** Previous / next for lists paged by number (`page`, `limit`, `count` from the server). */
export function Pager({
  page,
  limit,
  count,
  onPage,
  label,
}: {
  page: number;
  limit: number;
  count: number;
  onPage: (p: number) => void;
  label: string;
}) {
  const pages = Math.max(1, Math.ceil(count / limit));
  if (count <= limit && page === 1) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" className="btn btn-small" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" className="btn btn-small" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/**
 * Previous / next for lists paged by cursor (keyset): the server gives the next page's cursor, the
 * page keeps the cursors it followed. Shown once there is a page before or after this one.
 */
export function CursorPager({
  page,
  hasNext,
  onPrevious,
  onNext,
  label,
}: {
  /** 1 + the number of cursors followed. */
  page: number;
  hasNext: boolean;
  onPrevious: () => void;
  onNext: () => void;
  label: string;
}) {
  if (page === 1 && !hasNext) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" className="btn btn-small" disabled={page === 1} onClick={onPrevious}>
        Previous
      </button>
      <span>Page {page}</span>
      <button type="button" className="btn btn-small" disabled={!hasNext} onClick={onNext}>
        Next
      </button>
    </nav>
  );
}
