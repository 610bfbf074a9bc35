import { RESERVED_HEADERS } from '@mailrail/domain/emails/headers';
import { buildRawMessage, customHeaders, defaultHeaders, type EmailToRender } from './build-mime';

// The reserved-header list is one definition (packages/domain/src/emails/headers.ts): the API
// refuses those names and the MIME builder drops them. These tests hold it to what the builder
// really writes.

const email: EmailToRender = {
  id: 'email1',
  from: 'Acme <hello@example.com>',
  to: ['Ada <ada@example.org>'],
  cc: ['cc@example.org'],
  replyTo: ['reply@example.com'],
  subject: 'Hello',
  html: '<p>Hi</p>',
  text: 'Hi',
  headers: null,
  attachments: [{ filename: 'a.txt', content: Buffer.from('hello').toString('base64') }],
  unsubUrl: 'https://mail.example.com/unsubscribe?id=1',
  inReplyToSesId: 'ses-1',
};

/** The names of the top-level header block of a raw message, lower-cased. */
function topLevelHeaderNames(raw: Buffer): string[] {
  const head = raw.toString('utf8').split('\r\n\r\n')[0];
  return head
    .split('\r\n')
    .filter((line) => !/^[ \t]/.test(line))
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
}

it('reserves every header the builder sets itself, except the defaults a custom header may replace', async () => {
  const defaults = new Set(Object.keys(defaultHeaders(email)).map((h) => h.toLowerCase()));
  const names = topLevelHeaderNames(await buildRawMessage(email));
  expect(names).toEqual(
    expect.arrayContaining([
      'from',
      'to',
      'cc',
      'reply-to',
      'subject',
      'message-id',
      'date',
      'mime-version',
      'content-type',
      'x-usesend-email-id',
    ]),
  );
  const unreserved = names.filter((n) => !RESERVED_HEADERS.has(n) && !defaults.has(n));
  expect(unreserved).toEqual([]);
  // A default is not reserved: the client may set it (a transactional List-Unsubscribe, threading).
  expect([...defaults].filter((n) => RESERVED_HEADERS.has(n))).toEqual([]);
});

it('drops from a stored row every header the API refuses, in any case', () => {
  for (const name of RESERVED_HEADERS) {
    expect(customHeaders({ [name]: 'x', [name.toUpperCase()]: 'y' })).toEqual({});
  }
  expect(customHeaders({ 'X-Campaign': 'spring', 'List-Unsubscribe': '<mailto:u@example.com>' })).toEqual({
    'X-Campaign': 'spring',
    'List-Unsubscribe': '<mailto:u@example.com>',
  });
});

it('keeps its own value for a reserved header found in a stored row', async () => {
  const raw = (
    await buildRawMessage({ ...email, headers: { 'Return-Path': '<evil@example.net>', 'X-Unsend-Email-ID': 'forged' } })
  ).toString('utf8');
  expect(raw).not.toMatch(/evil@example\.net|forged/);
});
