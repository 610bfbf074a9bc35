import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { contactRoutes } from '../contacts/routes';
import { segmentRoutes } from '../segments/routes';
import { contactImportRoutes } from '../contact-imports/routes';
import { contactBookIdParams, createContactBookBody, updateContactBookBody } from './schemas';
import { createContactBook, deleteContactBook, getContactBook, listContactBooks, updateContactBook } from './service';

export function contactBookRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.post('/', async (req, res) => {
    res.json(await createContactBook(deps, req.auth, parseOrThrow(createContactBookBody, req.body)));
  });
  r.get('/', async (req, res) => {
    res.json(await listContactBooks(deps, req.auth));
  });
  r.get('/:contactBookId', async (req, res) => {
    const { contactBookId } = parseOrThrow(contactBookIdParams, req.params, 'path');
    res.json(await getContactBook(deps, req.auth, contactBookId));
  });
  r.patch('/:contactBookId', async (req, res) => {
    const { contactBookId } = parseOrThrow(contactBookIdParams, req.params, 'path');
    res.json(await updateContactBook(deps, req.auth, contactBookId, parseOrThrow(updateContactBookBody, req.body ?? {})));
  });
  r.delete('/:contactBookId', async (req, res) => {
    const { contactBookId } = parseOrThrow(contactBookIdParams, req.params, 'path');
    res.json(await deleteContactBook(deps, req.auth, contactBookId));
  });
  r.use('/:contactBookId/contacts', contactRoutes(deps));
  r.use('/:contactBookId/segments', segmentRoutes(deps));
  r.use('/:contactBookId/imports', contactImportRoutes(deps));
  return r;
}
