import { TextDecoder } from 'node:util';
import type { Readable } from 'node:stream';
import type busboy from 'busboy';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';
import type { Request } from 'express';
import { IMPORT_CHUNK_BYTES } from '@mailrail/domain/audience/imports/import-file-store';
import { ApiError, badRequest } from '@mailrail/domain/errors/api-error';

export const NOT_MULTIPART = 'Content-Type must be multipart/form-data with the CSV in a `file` part';

export interface ReceivedUpload {
  fileName: string;
  bytes: number;
  /** The first stored chunk: enough to read the header and a sample. */
  head: Buffer;
  fields: Record<string, string>;
}

const MAX_FILE_NAME_LENGTH = 255;
// Loaded by the first upload, like csv-parse in service.ts (docs/worker.md, "Memory").
const createBusboy = loadOnFirstUse<typeof busboy>('busboy');

export const notUtf8 = () => badRequest('The file is not UTF-8 text: save it as CSV UTF-8 and upload it again');

/**
 * Reads a multipart/form-data upload with its CSV in the `file` part, handing the file to
 * `storeChunk` in pieces of about 1 MB as it arrives (the next piece is read once the last one is
 * stored: memory stays bounded, the file never touches this process's disk). Checks on the way that
 * the bytes are UTF-8 and that there are at most `maxBytes` of them (413 as soon as there are more).
 */
export function receiveCsvUpload(
  req: Request,
  opts: { maxBytes: number; storeChunk: (seq: number, data: Buffer) => Promise<void> },
): Promise<ReceivedUpload> {
  return new Promise((resolve, reject) => {
    const tooLarge = new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${Math.round(opts.maxBytes / 1048576)} MB`);
    if (Number(req.headers['content-length'] ?? 0) > opts.maxBytes + 1024 * 1024) return reject(tooLarge);
    let form: busboy.Busboy;
    try {
      form = createBusboy()({
        headers: req.headers,
        limits: { files: 1, fileSize: opts.maxBytes, fields: 10, fieldSize: 256 * 1024, parts: 12 },
      });
    } catch {
      return reject(badRequest(NOT_MULTIPART));
    }
    const fields: Record<string, string> = {};
    let file: Promise<Omit<ReceivedUpload, 'fields' | 'fileName'>> | undefined;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      // The rest of the body is read and dropped, so the answer reaches a client still sending.
      req.unpipe(form);
      req.resume();
      reject(err);
    };
    form.on('file', (name, stream, info) => {
      if (name !== 'file' || file) return stream.resume();
      const stored = storeFile(stream, opts, tooLarge);
      file = stored;
      stored.catch((err: unknown) => {
        stream.resume();
        fail(err);
      });
      // A file name is informative only: cut, never refused.
      fileName = (info.filename || 'contacts.csv').slice(0, MAX_FILE_NAME_LENGTH);
    });
    let fileName = 'contacts.csv';
    form.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(badRequest(`The form field ${name.slice(0, 64)} is too long`));
      else fields[name] = value;
    });
    form.on('error', () => fail(badRequest('The multipart/form-data body is malformed')));
    form.on('close', () => {
      if (!file) return fail(badRequest('The form has no `file` part'));
      file.then((got) => !failed && resolve({ ...got, fileName, fields }), fail);
    });
    req.on('error', fail);
    req.pipe(form);
  });
}

async function storeFile(
  stream: Readable & { truncated?: boolean },
  opts: { storeChunk: (seq: number, data: Buffer) => Promise<void> },
  tooLarge: ApiError,
): Promise<Omit<ReceivedUpload, 'fields' | 'fileName'>> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pieces: Buffer[] = [];
  let pending = 0;
  let bytes = 0;
  let seq = 0;
  let head: Buffer | undefined;
  let limitHit = false;
  // One chunk is written while the next is read from the socket; at most two are in memory.
  let writing: Promise<void> = Promise.resolve();
  stream.once('limit', () => (limitHit = true));
  const flush = async () => {
    const data = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
    pieces = [];
    pending = 0;
    try {
      decoder.decode(data, { stream: true });
    } catch {
      throw notUtf8();
    }
    head ??= data;
    await writing;
    writing = opts.storeChunk(seq++, data);
    writing.catch(() => undefined); // awaited by the next flush or at the end
  };
  try {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      if (limitHit) throw tooLarge;
      bytes += piece.length;
      pieces.push(piece);
      pending += piece.length;
      if (pending >= IMPORT_CHUNK_BYTES) await flush();
    }
    if (limitHit || stream.truncated) throw tooLarge;
    if (pending > 0) await flush();
    await writing;
  } finally {
    // On an error too, the caller cleans up only once no write is left in flight.
    await writing.catch(() => undefined);
  }
  try {
    decoder.decode();
  } catch {
    throw notUtf8();
  }
  if (!head) throw badRequest('The file is empty');
  return { bytes, head };
}
