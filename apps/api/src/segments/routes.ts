import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { bookParams, createSegmentBody, previewSegmentBody, segmentContactsQuery, segmentParams, updateSegmentBody } from './schemas';
import { createSegment, deleteSegment, getSegment, listSegments, previewSegmentJson, segmentContactsJson, updateSegment } from './service';

/** Mounted at /api/v1/contactBooks/:contactBookId/segments. */
export function segmentRoutes(deps: ApiDeps): Router {
  const r = Router({ mergeParams: true });
  r.post('/', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookParams, req.params, 'path');
    res.json(await createSegment(deps, req.auth, contactBookId, parseOrThrow(createSegmentBody, req.body)));
  });
  r.get('/', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookParams, req.params, 'path');
    res.json(await listSegments(deps, req.auth, contactBookId));
  });
  // Static before /:segmentId, so `preview` is never taken for an id.
  r.post('/preview', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookParams, req.params, 'path');
    const { filter } = parseOrThrow(previewSegmentBody, req.body);
    res.type('json').send(await previewSegmentJson(deps, req.auth, contactBookId, filter));
  });
  r.get('/:segmentId', async (req, res) => {
    const { contactBookId, segmentId } = parseOrThrow(segmentParams, req.params, 'path');
    res.json(await getSegment(deps, req.auth, contactBookId, segmentId));
  });
  r.patch('/:segmentId', async (req, res) => {
    const { contactBookId, segmentId } = parseOrThrow(segmentParams, req.params, 'path');
    res.json(await updateSegment(deps, req.auth, contactBookId, segmentId, parseOrThrow(updateSegmentBody, req.body ?? {})));
  });
  r.delete('/:segmentId', async (req, res) => {
    const { contactBookId, segmentId } = parseOrThrow(segmentParams, req.params, 'path');
    res.json(await deleteSegment(deps, req.auth, contactBookId, segmentId));
  });
  r.get('/:segmentId/contacts', async (req, res) => {
    const { contactBookId, segmentId } = parseOrThrow(segmentParams, req.params, 'path');
    const q = parseOrThrow(segmentContactsQuery, req.query, 'query');
    res.type('json').send(await segmentContactsJson(deps, req.auth, contactBookId, segmentId, q));
  });
  return r;
}
