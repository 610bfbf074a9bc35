import { hashPassword, verifyAgainstDummy, verifyPassword } from './passwords';
import { dashboardLink, hashSecretToken, looksLikeSecretToken, newSecretToken } from './link-tokens';

describe('passwords', () => {
  it('hashes with argon2id in PHC form, salted, and verifies only the right password', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse'), hashPassword('correct horse')]);
    expect(a).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword(a, 'correct horse')).toBe(true);
    expect(await verifyPassword(a, 'Correct horse')).toBe(false);
  });

  it('treats a malformed stored hash as a wrong password, and the dummy check always fails', async () => {
    expect(await verifyPassword('not a hash', 'x')).toBe(false);
    expect(await verifyAgainstDummy('mailrail-dummy-password-for-timing')).toBe(false);
  });
});

describe('link tokens', () => {
  it('are 256 random bits in base64url, stored as SHA-256, and ride in the fragment of a link', () => {
    const token = newSecretToken();
    expect(looksLikeSecretToken(token)).toBe(true);
    expect(newSecretToken()).not.toBe(token);
    expect(hashSecretToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(looksLikeSecretToken(`${token}x`)).toBe(false);
    expect(dashboardLink('https://mail.example.com', 'reset-password', token)).toBe(
      `https://mail.example.com/reset-password#token=${token}`,
    );
  });
});
