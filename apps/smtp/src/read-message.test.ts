import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { readMessage, readSimple, readWithMailparser } from './read-message';

// The linear path must read exactly what mailparser reads, for every message it takes; the
// others must be left to mailparser.
const KEY = 'x-mailrail-idempotency-key';
const build = (options: Mail.Options) => new MailComposer(options).compile().build();
const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'));

const html = `<html><body><h1>Hello</h1>${'<p>A paragraph with a <a href="https://example.com/x?a=1&b=2">link</a>.</p>'.repeat(6)}</body></html>`;
const text = 'Hello, this is the plain text part.\n'.repeat(6);

const taken: [string, () => Promise<Buffer> | Buffer][] = [
  [
    'text and html (multipart/alternative, 7bit)',
    () => build({ from: 'Shop <a@shop.example>', to: 'b@dest.example', subject: 'Hi', text, html }),
  ],
  [
    'UTF-8 in every field (quoted-printable bodies, encoded words)',
    () =>
      build({
        from: '"Jõgeva Pood" <pood@shop.example>',
        to: ['Zoë Ünal <zoe@dest.example>', 'plain@dest.example'],
        cc: 'Çağla <cagla@dest.example>',
        replyTo: 'Répondre <reply@shop.example>',
        subject: 'Café – ünïcödé ✓ '.repeat(6),
        text: `Bonjour, voilà le café ☕ et une très longue ligne ${'x'.repeat(200)}\nfin\n`,
        html: `<p>Voilà ☕ ${'é'.repeat(10)}</p>${'<p>lorem ipsum</p>'.repeat(20)}`,
        messageId: '<ünique.1@shop.example>',
        headers: { [KEY]: 'order-42' },
      }),
  ],
  ['text only', () => build({ from: 'a@shop.example', to: 'b@dest.example', subject: 'T', text: 'just text\r\nsecond line\n' })],
  ['html only', () => build({ from: 'a@shop.example', to: 'b@dest.example', subject: 'H', html: '<p>only html</p>' })],
  [
    'hand-written: no Content-Type, folded headers, repeated To, a group, a Message-ID without brackets, a repeated idempotency key',
    () =>
      crlf([
        'From: =?UTF-8?Q?Ana_Mar=C3=ADa?= <ana@shop.example>',
        'To: one@dest.example,',
        '\t"Two, Esq." <two@dest.example>',
        'To: Team: three@dest.example, four@dest.example;',
        'Cc: ',
        'Subject: =?UTF-8?B?w4lsw6l2ZQ==?= and',
        '  more',
        'Message-ID: bare-id@shop.example',
        `${KEY}: one`,
        `${KEY}: two`,
        '',
        'Hello from a cron job.',
        '',
      ]),
  ],
  [
    'hand-written multipart: preamble, epilogue, whitespace after a delimiter, charset case, CRLF bodies, raw UTF-8 headers',
    () =>
      crlf([
        'From: Zoë <zoe@shop.example>',
        'To: b@dest.example',
        'Subject: Grüße',
        'MIME-Version: 1.0',
        'Content-Type: multipart/alternative; boundary="b1 x"',
        '',
        'This is a preamble.',
        '--b1 x  ',
        'Content-Type: text/html; charset="UTF-8"',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        '<p>soft=',
        ' break =C3=A9</p>',
        '',
        '--b1 x',
        'Content-Type: text/plain; charset=US-ASCII',
        '',
        'line 1',
        'line 2',
        '--b1 x--',
        'epilogue',
      ]),
  ],
];

const notTaken: [string, () => Promise<Buffer> | Buffer][] = [
  [
    'attachments and an inline image',
    () =>
      build({
        from: 'a@shop.example',
        to: 'b@dest.example',
        subject: 'A',
        text,
        html: '<img src="cid:logo">',
        attachments: [
          { filename: 'a.txt', content: 'attached' },
          { filename: 'logo.png', content: Buffer.from('89504e47', 'hex'), cid: 'logo' },
        ],
      }),
  ],
  [
    'base64 bodies',
    () => build({ from: 'a@shop.example', to: 'b@dest.example', subject: 'B', text: 'Привет мир, это текст. '.repeat(20) }),
  ],
  ['another charset', () => crlf(['From: a@shop.example', 'Content-Type: text/plain; charset=iso-8859-1', '', 'caf\xe9', ''])],
  ['format=flowed', () => crlf(['From: a@shop.example', 'Content-Type: text/plain; format=flowed', '', 'soft ', 'wrap', ''])],
  ['a text part marked as an attachment', () => crlf(['From: a@shop.example', 'Content-Disposition: attachment', '', 'x', ''])],
  ['bare LF lines', () => Buffer.from('From: a@shop.example\nSubject: x\n\nbody\n')],
  ['no blank line after the headers', () => Buffer.from('From: a@shop.example\r\nSubject: x\r\n')],
  [
    'a multipart without its closing delimiter',
    () =>
      crlf(['From: a@shop.example', 'Content-Type: multipart/alternative; boundary=zz', '', '--zz', 'Content-Type: text/plain', '', 'x']),
  ],
];

describe('readMessage', () => {
  it.each(taken)('reads %s in one pass, as mailparser does', async (_name, make) => {
    const raw = await make();
    const simple = readSimple(raw, KEY);
    expect(simple).not.toBeNull();
    expect(simple).toEqual(await readWithMailparser(raw, KEY));
  });

  it.each(notTaken)('leaves %s to mailparser', async (_name, make) => {
    const raw = await make();
    expect(readSimple(raw, KEY)).toBeNull();
    expect(await readMessage(raw, 'X-Mailrail-Idempotency-Key')).toEqual(await readWithMailparser(raw, KEY));
  });

  it('reads the fields the row needs', async () => {
    const raw = await taken[1][1]();
    const fields = await readMessage(raw, 'X-Mailrail-Idempotency-Key');
    expect(fields).toMatchObject({
      from: [{ name: 'Jõgeva Pood', address: 'pood@shop.example' }],
      to: [
        { name: 'Zoë Ünal', address: 'zoe@dest.example' },
        { name: '', address: 'plain@dest.example' },
      ],
      cc: [{ name: 'Çağla', address: 'cagla@dest.example' }],
      replyTo: [{ name: 'Répondre', address: 'reply@shop.example' }],
      messageId: '<ünique.1@shop.example>',
      idempotencyKey: 'order-42',
    });
    expect(fields.subject).toBe('Café – ünïcödé ✓ '.repeat(6));
    expect(fields.text).toContain('voilà le café ☕');
    expect(fields.html).toContain('<p>Voilà ☕');
  });
});
