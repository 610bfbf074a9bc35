import { TextDecoder } from 'node:util';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

/** A problem with the file itself (not one row): the import fails with this message, no retry. */
export class ImportFileError extends Error {}

/**
 * The uploaded file as text, one stored chunk (about 1 MB) at a time, so memory stays bounded
 * whatever the file's size. The bytes must be UTF-8 (a BOM is fine, csv-parse drops it): the
 * decoder is fatal and streaming, so a character split across two chunks is fine and an invalid
 * sequence anywhere fails the import.
 */
export async function* importFileText(sql: SqlExecutor, importId: string): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let offset = 0;
  for (let seq = 0; ; seq++) {
    const [chunk] = await sql.query<{ data: Buffer }>(`SELECT data FROM "ContactImportChunk" WHERE "importId" = $1 AND seq = $2`, [
      importId,
      seq,
    ]);
    if (!chunk) break;
    yield decode(decoder, chunk.data, offset, true);
    offset += chunk.data.length;
  }
  const rest = decode(decoder, new Uint8Array(0), offset, false);
  if (rest) yield rest;
}

function decode(decoder: TextDecoder, bytes: Uint8Array, offset: number, stream: boolean): string {
  try {
    return decoder.decode(bytes, { stream });
  } catch {
    throw new ImportFileError(
      `The file is not UTF-8 text: an invalid byte sequence between bytes ${offset} and ${offset + bytes.length}; save it as CSV UTF-8 and import it again`,
    );
  }
}
