import type { ReactNode } from 'react';

/**
 * A column heading: a label, or `{label, hidden}` for one only screen readers read (an actions
 * column), `{label, numeric}` for one aligned to the right like its figures.
 */
export type Column = string | { label: string; hidden?: true; numeric?: true };

/**
 * The dashboard's list table: a card that scrolls sideways on narrow screens, a caption for screen
 * readers, one header row of column headings, and the rows the page renders.
 */
export function DataTable({ caption, columns, children }: { caption: ReactNode; columns: Column[]; children: ReactNode }) {
  return (
    <div className="table-wrap card">
      <table className="list">
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
