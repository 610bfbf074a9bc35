import express, { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { badRequest } from '@mailrail/domain/errors/api-error';
import { bookPath, importPath, PREVIEW_MAX_BYTES } from './schemas';
import { getImport, listImports, previewImport, sendRejectsCsv, startImport } from './service';

// The preview takes the file's first bytes as they are (text/csv); the upload is multipart and
// read as a stream by the service. Both are exempt from the JSON body parser (http/json-body.ts).
const previewBody = express.raw({ type: ['text/csv', 'text/plain', 'application/octet-stream'], limit: PREVIEW_MAX_BYTES });

/** Mounted at /api/v1/contactBooks/:contactBookId/imports. */
export function contactImportRoutes(deps: ApiDeps): Router {
  const r = Router({ mergeParams: true });
  r.post('/preview', previewBody, async (req, res) => {
    const { contactBookId } = parseOrThrow(bookPath, req.params, 'path');
    if (!Buffer.isBuffer(req.body)) throw badRequest('Content-Type must be text/csv, with the first bytes (at most 64 KB) of the file');
    res.json(await previewImport(deps, req.auth, contactBookId, req.body));
  });
  r.post('/', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookPath, req.params, 'path');
    res.status(202).json(await startImport(deps, req.auth, contactBookId, req));
  });
  r.get('/', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookPath, req.params, 'path');
    res.json(await listImports(deps, req.auth, contactBookId));
  });
  r.get('/:importId', async (req, res) => {
    const { contactBookId, importId } = parseOrThrow(importPath, req.params, 'path');
    res.json(await getImport(deps, req.auth, contactBookId, importId));
  });
  r.get('/:importId/rejects', async (req, res) => {
    const { contactBookId, importId } = parseOrThrow(importPath, req.params, 'path');
    await sendRejectsCsv(deps, req.auth, contactBookId, importId, res);
  });
  return r;
}
