import { RESERVED_HEADERS } from '@mailrail/domain/emails/headers';
import { sendEmailPayload } from './schemas';

// The API refuses exactly the list the worker's MIME builder drops (packages/domain/src/emails/headers.ts).
const base = { from: 'hello@example.com', to: 'a@example.org', subject: 'S', text: 'T' };

it('refuses every reserved header, whatever its case', () => {
  for (const name of RESERVED_HEADERS) {
    for (const spelled of [name, name.toUpperCase()]) {
      const r = sendEmailPayload.safeParse({ ...base, headers: { [spelled]: 'x' } });
      expect(r.success ? spelled : r.error.issues.map((i) => i.message)).toEqual([
        `header ${spelled} is set by mailrail and cannot be overridden`,
      ]);
    }
  }
});

it('accepts the headers the worker only sets by default (threading, List-Unsubscribe)', () => {
  const headers = { 'In-Reply-To': '<a@b>', References: '<a@b>', 'List-Unsubscribe': '<mailto:u@example.com>', 'X-Entity-Ref-ID': 'r' };
  expect(sendEmailPayload.safeParse({ ...base, headers }).success).toBe(true);
});
