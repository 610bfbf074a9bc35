import {
  contactPropertyList,
  fromStoredPropertyType,
  MAX_BOOK_PROPERTIES,
  propertyName,
  toStoredPropertyType,
  type ContactPropertyDefinition,
  type ContactPropertyView,
  type PropertyType,
} from '@mailrail/domain/audience/properties/contact-properties';
import type { Db } from '@mailrail/platform/db/client';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { z } from 'zod';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { findTeamContactBook } from '../contact-books/service';

// A book's typed property registry (packages/domain/src/audience/properties): read, replaced as a
// whole by PUT, and filled by imports from their column mapping.

async function readRegistry(db: Db, contactBookId: string): Promise<ContactPropertyView[]> {
  const rows = await db.contactProperty.findMany({ where: { contactBookId }, orderBy: [{ position: 'asc' }, { name: 'asc' }] });
  return rows.map((p) => ({ name: p.name, type: fromStoredPropertyType(p.type), fallback: p.fallback }));
}

export async function listContactProperties(deps: ApiDeps, auth: AuthContext, contactBookId: string): Promise<ContactPropertyView[]> {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  return readRegistry(deps.db, book.id);
}

/** PUT: the list becomes the registry, in its order. Contacts' values are not touched. */
export async function replaceContactProperties(
  deps: ApiDeps,
  auth: AuthContext,
  contactBookId: string,
  list: z.infer<typeof contactPropertyList>,
): Promise<ContactPropertyView[]> {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  await deps.db.$transaction(async (tx) => {
    // Concurrent PUTs of one book apply one after the other, never interleaved.
    await prismaExecutor(tx).execute(`SELECT id FROM "ContactBook" WHERE id = $1 FOR UPDATE`, [book.id]);
    await tx.contactProperty.deleteMany({ where: { contactBookId: book.id } });
    await tx.contactProperty.createMany({
      data: list.map((p: ContactPropertyDefinition, position) => ({
        contactBookId: book.id,
        name: p.name,
        type: toStoredPropertyType(p.type),
        fallback: p.fallback ?? null,
        position,
      })),
    });
  });
  return readRegistry(deps.db, book.id);
}

/**
 * Registers an import's property columns: a name the registry has (compared without case) takes
 * the type the import confirmed, when it gave one; a new name is appended with that type (string
 * when none). Names that cannot be properties, and names past MAX_BOOK_PROPERTIES, are left out:
 * their values are still imported. Answers each column's name as the registry spells it, so the
 * import stores values under the registered key.
 */
export async function registerImportedProperties(
  db: Db,
  contactBookId: string,
  columns: readonly { name: string; type?: PropertyType }[],
): Promise<Map<string, string>> {
  return db.$transaction(async (tx) => {
    const sql = prismaExecutor(tx);
    await sql.execute(`SELECT id FROM "ContactBook" WHERE id = $1 FOR UPDATE`, [contactBookId]);
    const existing = await tx.contactProperty.findMany({ where: { contactBookId }, select: { name: true, position: true } });
    const byLower = new Map(existing.map((p) => [p.name.toLowerCase(), p.name]));
    let position = existing.reduce((max, p) => Math.max(max, p.position + 1), 0);
    let count = existing.length;
    for (const column of columns) {
      if (!propertyName.safeParse(column.name).success) continue;
      const known = byLower.get(column.name.toLowerCase());
      if (known !== undefined) {
        if (column.type)
          await tx.contactProperty.update({
            where: { contactBookId_name: { contactBookId, name: known } },
            data: { type: toStoredPropertyType(column.type) },
          });
        continue;
      }
      if (count >= MAX_BOOK_PROPERTIES) continue;
      await tx.contactProperty.create({
        data: { contactBookId, name: column.name, type: toStoredPropertyType(column.type ?? 'string'), position: position++ },
      });
      byLower.set(column.name.toLowerCase(), column.name);
      count++;
    }
    return new Map(columns.map((c) => [c.name, byLower.get(c.name.toLowerCase()) ?? c.name]));
  });
}
