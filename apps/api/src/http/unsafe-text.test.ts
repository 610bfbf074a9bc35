import { assertSafeJsonBody } from './unsafe-text';

describe('assertSafeJsonBody (the accept lane: the raw text decides whether the parsed body is walked)', () => {
  const check = (text: string) => () => assertSafeJsonBody(text, JSON.parse(text));

  it('refuses a NUL or a lone surrogate spelt as a \\u escape, at any depth', () => {
    expect(check('{"subject":"a\\u0000b"}')).toThrow(/NUL/);
    expect(check('[{"to":["x"],"html":"\\ud800"}]')).toThrow(/surrogate/);
    expect(check('{"k\\u0000":1}')).toThrow(/NUL/);
  });

  it('takes plain text, emoji written raw or as an escaped pair, and an escaped backslash before a u', () => {
    expect(check('{"subject":"Fans 🎉"}')).not.toThrow();
    expect(check('{"subject":"\\ud83c\\udf89"}')).not.toThrow();
    expect(check('{"path":"C:\\\\users"}')).not.toThrow();
  });
});
