import { maskUrlCredentials, trimTrailing } from './trim';

describe('trimTrailing', () => {
  it('drops only the run of the character at the end', () => {
    expect(trimTrailing('http://x.test///', '/')).toBe('http://x.test');
    expect(trimTrailing('/a//b', '/')).toBe('/a//b');
    expect(trimTrailing('///', '/')).toBe('');
    expect(trimTrailing('text\n\n', '\n')).toBe('text');
  });

  it('is linear on a long run that does not reach the end (issue 15)', () => {
    const path = `/api/v1${'/'.repeat(200_000)}x`;
    const t0 = performance.now();
    expect(trimTrailing(path, '/')).toBe(path);
    expect(performance.now() - t0).toBeLessThan(50);
  });
});

describe('maskUrlCredentials', () => {
  it('hides the user and password and keeps the rest', () => {
    expect(maskUrlCredentials('postgresql://postgres:secret@127.0.0.1:5432/db')).toBe('postgresql://***@127.0.0.1:5432/db');
    expect(maskUrlCredentials('postgresql://127.0.0.1:5432/db')).toBe('postgresql://127.0.0.1:5432/db');
    expect(maskUrlCredentials('not a url')).toBe('not a url');
  });

  it('is linear on many // without an @', () => {
    const url = `x:${'//'.repeat(100_000)}`;
    const t0 = performance.now();
    expect(maskUrlCredentials(url)).toBe(url);
    expect(performance.now() - t0).toBeLessThan(50);
  });
});
