import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import type { ContactProperty, ContactPropertyList, PropertyType } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';

// A book's typed property registry, for every page that needs it: the contact list's columns, the
// edit dialog's fields, the segment builder's typed fields, the import's type column and the
// editor's variable picker (name, type, fallback).

export const PROPERTY_TYPE_LABELS: Record<PropertyType, string> = { string: 'Text', number: 'Number', boolean: 'Yes / no', date: 'Date' };

/** The book's properties in display order (empty while loading, or with no book chosen yet). */
export function useContactProperties(bookId: string) {
  const query = useTeamQuery<ContactPropertyList>(
    ['contact-books', bookId, 'properties'],
    `/v1/contactBooks/${bookId}/properties`,
    undefined,
    { enabled: !!bookId },
  );
  return { ...query, properties: query.data?.properties ?? [] };
}

/** PUT: the list replaces the registry; the server's 400 names the entry (`properties.<i>.name`). */
export function useSaveContactProperties(bookId: string) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (properties: ContactProperty[]) =>
      api.put<ContactPropertyList>(`${base}/v1/contactBooks/${bookId}/properties`, { properties }),
    onSuccess: () => qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books', bookId, 'properties') }),
  });
}

/** A contact's property value as text: the API stores strings (its document types a value as unknown). */
export function propertyText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** All of a contact's property values as text (the edit dialog's fields). */
export function propertyTexts(properties: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(properties).map(([name, v]) => [name, propertyText(v) ?? '']));
}

/** A stored value as the list shows it: a yes/no property as yes/no, the rest as written. */
export function displayPropertyValue(type: PropertyType, value: string | undefined): string {
  if (value === undefined || value === '') return '';
  if (type === 'boolean') {
    const v = value.trim().toLowerCase();
    if (v === 'true') return 'yes';
    if (v === 'false') return 'no';
  }
  return value;
}
