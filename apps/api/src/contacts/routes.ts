import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import {
  anyBookPath,
  bookPath,
  bulkContactsBody,
  bulkDeleteBody,
  contactInput,
  exportContactsQuery,
  contactPath,
  listContactsQuery,
  updateContactBody,
  upsertPath,
} from './schemas';
import {
  bulkDeleteContacts,
  bulkUpsertContacts,
  createContact,
  deleteContact,
  getContactJson,
  listContactsJson,
  updateContact,
} from './service';
import { exportContactsCsv } from './export';

/** Mounted at /api/v1/contactBooks/:contactBookId/contacts. */
export function contactRoutes(deps: ApiDeps): Router {
  const r = Router({ mergeParams: true });

  // The static /bulk and /export routes come before /:contactId, so neither is taken for a contact id.
  r.post('/bulk', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookPath, req.params, 'path');
    res.json(await bulkUpsertContacts(deps, req.auth, contactBookId, parseOrThrow(bulkContactsBody, req.body)));
  });
  r.delete('/bulk', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookPath, req.params, 'path');
    const { contactIds } = parseOrThrow(bulkDeleteBody, req.body);
    res.json(await bulkDeleteContacts(deps, req.auth, contactBookId, contactIds));
  });

  r.get('/export', async (req, res) => {
    const { contactBookId } = parseOrThrow(anyBookPath, req.params, 'path');
    const { segmentId } = parseOrThrow(exportContactsQuery, req.query, 'query');
    await exportContactsCsv(deps, req.auth, contactBookId, segmentId, res);
  });

  r.post('/', async (req, res) => {
    const { contactBookId } = parseOrThrow(bookPath, req.params, 'path');
    res.json(await createContact(deps, req.auth, contactBookId, parseOrThrow(contactInput, req.body)));
  });
  r.get('/', async (req, res) => {
    const { contactBookId } = parseOrThrow(anyBookPath, req.params, 'path');
    const q = parseOrThrow(listContactsQuery, req.query, 'query');
    // Up to 5000 contacts: sent as built by PostgreSQL, without hashing megabytes for an ETag.
    res.type('json').end(await listContactsJson(deps, req.auth, contactBookId, q));
  });

  r.get('/:contactId', async (req, res) => {
    const { contactBookId, contactId } = parseOrThrow(contactPath, req.params, 'path');
    res.type('json').send(await getContactJson(deps, req.auth, contactBookId, contactId));
  });
  // useSend's upsert: keyed on (book, email); the path's contactId is not used to find the contact.
  r.put('/:contactId', async (req, res) => {
    const { contactBookId } = parseOrThrow(upsertPath, req.params, 'path');
    res.json(await createContact(deps, req.auth, contactBookId, parseOrThrow(contactInput, req.body)));
  });
  r.patch('/:contactId', async (req, res) => {
    const { contactBookId, contactId } = parseOrThrow(contactPath, req.params, 'path');
    res.json(await updateContact(deps, req.auth, contactBookId, contactId, parseOrThrow(updateContactBody, req.body ?? {})));
  });
  r.delete('/:contactId', async (req, res) => {
    const { contactBookId, contactId } = parseOrThrow(contactPath, req.params, 'path');
    res.json(await deleteContact(deps, req.auth, contactBookId, contactId));
  });
  return r;
}
