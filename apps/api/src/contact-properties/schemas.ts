import { z } from 'zod';
import { contactPropertyList } from '@mailrail/domain/audience/properties/contact-properties';
import { MAX_ID_LENGTH } from '../http/limits';

export const bookParams = z.object({ contactBookId: z.string().min(1).max(MAX_ID_LENGTH) });
export const replacePropertiesBody = z.object({ properties: contactPropertyList });
