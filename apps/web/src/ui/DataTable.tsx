import { useLayoutEffect, useRef, type ReactNode } from 'react';

/**
 * A column heading: a label, or `{label, hidden}` for one only screen readers read (an actions
 * column), `{label, numeric}` for one aligned to the right like its figures.
 */
export type Column = string | { label: string; hidden?: true; numeric?: true };

/**
 * The dashboard's list table: a card, a caption for screen readers, one header row of column
 * headings, and the rows the page renders. On a phone (styles.css) each row is a small card of
 * "heading: value" lines: every cell gets its column's heading as `data-label` here, after each
 * render, so the pages' rows need not repeat them.
 */
export function DataTable({ caption, columns, children }: { caption: ReactNode; columns: Column[]; children: ReactNode }) {
  const table = useRef<HTMLTableElement>(null);
  const labels = columns.map((c) => (typeof c === 'string' ? c : c.hidden ? '' : c.label));
  useLayoutEffect(() => {
    for (const row of table.current?.tBodies[0]?.rows ?? []) {
      // A row of one cell across every column (an empty or loading row) keeps no label.
      if (row.cells.length === 1 && row.cells[0].colSpan > 1) continue;
      for (const [i, cell] of [...row.cells].entries()) cell.dataset.label = labels[i] ?? '';
    }
  });
  return (
    <div className="table-wrap card">
      <table className="list stacks" ref={table}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => {
              const { label, hidden, numeric } = typeof c === 'string' ? { label: c } : c;
              return (
                <th key={label} scope="col" className={numeric ? 'num' : undefined}>
                  {hidden ? <span className="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
