import { badRequest } from '@mailrail/domain/errors/api-error';

// The cursor of the lists paged newest first by (createdAt, id): the email log and an address's
// messages. Opaque to the client (base64url of the last row's two keys); a cursor that is not one
// of ours is a 400 on `cursor`, never a 500.

export interface CreatedAtCursor {
  createdAt: Date;
  id: string;
}

export function encodeCreatedAtCursor(c: CreatedAtCursor): string {
  return Buffer.from(JSON.stringify([c.createdAt.toISOString(), c.id])).toString('base64url');
}

export function decodeCreatedAtCursor(text: string): CreatedAtCursor {
  try {
    const [at, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const createdAt = new Date(String(at));
    if (typeof at === 'string' && typeof id === 'string' && id.length <= 128 && !Number.isNaN(createdAt.getTime()))
      return { createdAt, id };
  } catch {
    // falls through to the 400
  }
  throw badRequest('Invalid query: cursor: not a cursor from a previous page', [
    { path: ['cursor'], message: 'not a cursor from a previous page' },
  ]);
}
