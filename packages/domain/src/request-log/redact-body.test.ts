import { LOGGED_BODY_MAX, LOGGED_STRING_MAX, REDACTED, redactRequestBody, storable } from './redact-body';

// What the request log keeps of a body. The size cap is checked on the JSON the log stores, so
// bodies near it are built from characters JSON escapes (a control character takes 6).

const fields = (n: number, value: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, value]));

it('keeps a small body as it is, secrets redacted and long strings cut', () => {
  const body = { subject: 'Hi', apiKey: 'us_123', nested: { password: 'x', list: [1, 'two'] }, html: 'h'.repeat(1000) };
  const kept = redactRequestBody(body) as Record<string, unknown>;
  expect(kept).toMatchObject({ subject: 'Hi', apiKey: REDACTED, nested: { password: REDACTED, list: [1, 'two'] } });
  expect(kept.html).toBe(`${'h'.repeat(LOGGED_STRING_MAX)}… (1000 chars)`);
  expect(redactRequestBody({})).toBeNull();
});

it('replaces a body whose stored JSON would pass the cap by a note of its size, however its characters escape', () => {
  // 40 strings of 250 plain characters: 10,000 characters of JSON.
  expect(redactRequestBody(fields(40, 'a'.repeat(250)))).toEqual({
    note: expect.stringMatching(/^body of \d+ characters after redaction, not kept$/),
  });
  // 8 strings of 200 control characters: 1,600 characters, but 9,600 and more once escaped.
  const escaped = redactRequestBody(fields(8, '\u0001'.repeat(200)));
  expect(escaped).toEqual({ note: expect.stringMatching(/not kept$/) });
  // Just under the cap once escaped: kept whole.
  const under = fields(6, '\u0001'.repeat(200));
  expect(JSON.stringify(under).length).toBeLessThan(LOGGED_BODY_MAX);
  expect(redactRequestBody(under)).toEqual(under);
});

it('makes every string storable in PostgreSQL text and jsonb (no NUL, no lone surrogate), and leaves others untouched', () => {
  expect(storable('a\u0000b\ud800')).toBe('a\ufffdb\ufffd');
  const plain = 'plain text ✓';
  expect(storable(plain)).toBe(plain);
  expect(redactRequestBody({ ['k\u0000']: 'v\udc00' })).toEqual({ 'k\ufffd': 'v\ufffd' });
});
