import { maskUrlCredentials, trimTrailing } from './trim';

describe('trimTrailing', () => {
  it('drops only the run of the character at the end', () => {
    expect(trimTrailing('http://x.test///', '/')).toBe('http://x.test');
    expect(trimTrailing('/a//b', '/')).toBe('/a//b');
    expect(trimTrailing('///', '/')).toBe('');
    expect(trimTrailing('text\n\n', '\n')).toBe('text');
  });

  // The input that made the regex form quadratic (issue 15): the answer here, the time in
  // bench/hostile-input/run.ts (a test cannot tell a slow algorithm from a busy machine).
  it('keeps a long run that does not reach the end (issue 15)', () => {
    const path = `/api/v1${'/'.repeat(200_000)}x`;
    expect(trimTrailing(path, '/')).toBe(path);
  });
});

describe('maskUrlCredentials', () => {
  it('hides the user and password and keeps the rest', () => {
    expect(maskUrlCredentials('postgresql://postgres:secret@127.0.0.1:5432/db')).toBe('postgresql://***@127.0.0.1:5432/db');
    expect(maskUrlCredentials('postgresql://127.0.0.1:5432/db')).toBe('postgresql://127.0.0.1:5432/db');
    expect(maskUrlCredentials('not a url')).toBe('not a url');
  });

  it('leaves many // without an @ as they are (the time: bench/hostile-input/run.ts)', () => {
    const url = `x:${'//'.repeat(100_000)}`;
    expect(maskUrlCredentials(url)).toBe(url);
  });
});
