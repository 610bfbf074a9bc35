import { clientMessageForSes } from './client-message';

const text = (b: Buffer) => b.toString('latin1');

describe('clientMessageForSes', () => {
  it('keeps bare LF line ends, and every byte of the body', () => {
    const body = Buffer.from([0x0a, 0xff, 0x00, 0x42, 0x0a]);
    const raw = Buffer.concat([
      Buffer.from('Subject: x\nBCC: a@example.net,\n b@example.net\nX-Unsend-Email-ID: old\nTo: t@example.net\n'),
      body,
    ]);
    const out = clientMessageForSes(raw, 'e1');
    expect(text(out)).toBe(text(Buffer.concat([Buffer.from('X-Usesend-Email-ID: e1\nSubject: x\nTo: t@example.net\n'), body])));
  });

  it('handles a message with headers only, and one with no headers at all', () => {
    expect(text(clientMessageForSes(Buffer.from('Subject: only\r\n'), 'e2'))).toBe('X-Usesend-Email-ID: e2\r\nSubject: only\r\n');
    expect(text(clientMessageForSes(Buffer.from('\r\nbody\r\n'), 'e3'))).toBe('X-Usesend-Email-ID: e3\r\n\r\nbody\r\n');
  });

  it('keeps 8-bit bytes in headers unchanged', () => {
    const raw = Buffer.concat([Buffer.from('Subject: '), Buffer.from([0xe9, 0xe8]), Buffer.from('\r\n\r\nx')]);
    expect(clientMessageForSes(raw, 'e4').subarray('X-Usesend-Email-ID: e4\r\n'.length).equals(raw)).toBe(true);
  });
});
