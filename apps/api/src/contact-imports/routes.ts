import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import express from 'express';
import { badRequest } from '@mailrail/domain/errors/api-error';
import { getImport, listImports, previewImport, sendRejectsCsv, startImport } from './service';
import { NOT_MULTIPART } from './upload';
import { bookPath, importPath, importView, PREVIEW_MAX_BYTES, previewResponse, uploadForm } from './schemas';

// The preview takes the file's first bytes as they are (text/csv); the upload is multipart and
// read as a stream by the service. Both read their own body (`ownBody`): no JSON parser in front.
const previewBody = express.raw({ type: ['text/csv', 'text/plain', 'application/octet-stream'], limit: PREVIEW_MAX_BYTES });

const route = declareRoute<ApiDeps>();
const tag = 'Contact imports';
const base = '/api/v1/contactBooks/:contactBookId/imports';
const rules = 'See docs/audience.md, "Import contacts from CSV", for the mapping, the guessing rules and the limits.';

export const contactImportRoutes = [
  route({
    method: 'post',
    path: `${base}/preview`,
    tag,
    summary: "Read a CSV file's header and first rows, with the guessed mapping",
    description: `The body is the first bytes (at most 64 KB) of the file, as text/csv; a row cut at the end is left out. ${rules}`,
    params: bookPath,
    body: z.string().max(PREVIEW_MAX_BYTES).describe('The beginning of the CSV file'),
    bodyContentType: 'text/csv',
    example: 'email,first name,plan\nada@example.org,Ada,pro\n',
    response: previewResponse,
    errors: [404, 413],
    middleware: [previewBody],
    ownBody: 'stream',
    serve: async (deps, { auth, params }, req, res) => {
      if (!Buffer.isBuffer(req.body)) throw badRequest('Content-Type must be text/csv, with the first bytes (at most 64 KB) of the file');
      res.json(await previewImport(deps, auth, params.contactBookId, req.body));
    },
  }),
  route({
    method: 'post',
    path: base,
    tag,
    summary: 'Import contacts from a CSV file (runs in the background)',
    description:
      'multipart/form-data with the file in `file` (UTF-8, header row first, at most CONTACT_IMPORT_MAX_MB). ' +
      '400 when the file is not UTF-8, has no header, or no column maps to email; 413 when it is too large; ' +
      '429 when the team already has CONTACT_IMPORT_MAX_OPEN_PER_TEAM imports unfinished or its unfinished imports keep CONTACT_IMPORT_MAX_STORED_MB_PER_TEAM of files. ' +
      'Answers 202 with the queued import; poll GET .../imports/{importId} for progress. ' +
      'Imported contacts are not sent double opt-in confirmations. ' +
      rules,
    params: bookPath,
    body: uploadForm,
    bodyContentType: 'multipart/form-data',
    status: 202,
    response: importView,
    errors: [404, 413, 429],
    // multipart/form-data, read as a stream by the service.
    ownBody: 'stream',
    serve: async (deps, { auth, params }, req, res) => {
      // Refused before the book is looked up, as the JSON routes refuse a body of another type.
      if (!req.is('multipart/form-data')) throw badRequest(NOT_MULTIPART);
      res.status(202).json(await startImport(deps, auth, params.contactBookId, req));
    },
  }),
  route({
    method: 'get',
    path: base,
    tag,
    summary: "A book's imports, newest first (at most 50)",
    params: bookPath,
    response: z.array(importView),
    handle: (deps, { auth, params }) => listImports(deps, auth, params.contactBookId),
  }),
  route({
    method: 'get',
    path: `${base}/:importId`,
    tag,
    summary: 'An import and its progress',
    params: importPath,
    response: importView,
    handle: (deps, { auth, params }) => getImport(deps, auth, params.contactBookId, params.importId),
  }),
  route({
    method: 'get',
    path: `${base}/:importId/rejects`,
    tag,
    summary: 'The rows an import rejected, as CSV: line,reason,row',
    description:
      '`line` is the line of the file the row starts on (the header is line 1); `row` is its text, cut at 1,000 characters. ' +
      "A cell that would start a spreadsheet formula (`=`, `+`, `-`, `@`, tab, CR) is written with a leading `'`.",
    params: importPath,
    contentType: 'text/csv',
    response: z.string().describe('CSV with the header line,reason,row'),
    serve: (deps, { auth, params }, _req, res) => sendRejectsCsv(deps, auth, params.contactBookId, params.importId, res),
  }),
];
