import type { AttachmentSummary } from '../api/types';
import { DataTable } from '../ui/DataTable';
import { formatNumber } from '../ui/format';

/** Sizes as people read them: bytes, KB or MB (1,024 each). */
function formatSize(bytes: number): string {
  if (bytes < 1024) return `${formatNumber(bytes)} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** An email's attachments by name, type and size: the server keeps these after the contents are cleared. */
export function Attachments({ attachments }: { attachments: AttachmentSummary[] }) {
  if (attachments.length === 0) return <p className="muted">This email has no attachments.</p>;
  return (
    <DataTable caption="Attachments" columns={['Name', 'Type', 'Size']}>
      {attachments.map((a, i) => (
        <tr key={`${i}:${a.filename}`}>
          <td className="truncate">{a.filename}</td>
          <td>{a.contentType}</td>
          <td>{formatSize(a.size)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
