import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

// Where an uploaded CSV file waits for the worker: PostgreSQL, in pieces of about CHUNK_BYTES
// written as the upload streams. No process keeps the file on its disk, so any API replica can
// take the upload and any worker replica can run the import.

export const IMPORT_CHUNK_BYTES = 1024 * 1024;

/** A new import row, invisible to clients (UPLOADING) until its file is complete. */
export async function createUploadingImport(sql: SqlExecutor, row: { id: string; contactBookId: string; fileName: string; now: Date }) {
  await sql.execute(
    `INSERT INTO "ContactImport" (id, "contactBookId", "fileName", status, "createdAt") VALUES ($1, $2, $3, 'UPLOADING', $4)`,
    [row.id, row.contactBookId, row.fileName, row.now],
  );
}

/** One piece of the file; pieces are numbered from 0 in file order. */
export async function storeImportChunk(sql: SqlExecutor, importId: string, seq: number, data: Uint8Array): Promise<void> {
  await sql.execute(`INSERT INTO "ContactImportChunk" ("importId", seq, data) VALUES ($1, $2, $3)`, [importId, seq, data]);
}
