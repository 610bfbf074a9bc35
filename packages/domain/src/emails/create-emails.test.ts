import { createDb, type Db } from '@mailrail/platform/db/client';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { createTeam } from '../teams/api-keys';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { insertEmailRows, prepareEmails, type EmailDraft } from './create-emails';

let url: string;
let db: Db;
let teamId: number;

beforeAll(async () => {
  url = await createTestDatabase();
  db = createDb(url, 2);
  teamId = (await createTeam(db, 'Rows')).id;
});

afterAll(async () => {
  await db.$disconnect();
  await dropDatabase(url);
});

describe('insertEmailRows', () => {
  it('stores every column exactly, awkward characters included, with the first event', async () => {
    const now = new Date('2026-03-01T10:00:00.123Z');
    const scheduledAt = new Date('2026-03-02T08:30:00.000Z');
    const draft: EmailDraft = {
      teamId,
      domainId: null,
      region: 'us-east-1',
      source: 'CAMPAIGN',
      apiKeyId: 7,
      from: '"Ann, \\"A\\"" <a@x.org>',
      to: ['q"uote@x.org', 'back\\slash@x.org', 'comma,brace{}@x.org'],
      replyTo: ['r@x.org'],
      cc: [],
      bcc: ['NULL'],
      subject: 'Ünïcode ✓ {{x}}',
      html: null,
      text: 'line1\nline2',
      headers: { 'X-A': 'b' },
      attachments: [{ filename: 'a.txt', content: 'aGk=' }],
      templateId: 't1',
      inReplyToId: 'e0',
      scheduledAt,
      campaignId: 'c1',
      contactId: 'k1',
      unsubUrl: 'https://u/x',
      lane: 'marketing',
    };
    const [p] = prepareEmails([draft], now);
    await insertEmailRows(prismaExecutor(db), [p], now);
    const row = await db.email.findUniqueOrThrow({ where: { id: p.created.id }, include: { emailEvents: true } });
    expect(row).toMatchObject({
      teamId,
      domainId: null,
      apiKeyId: 7,
      from: draft.from,
      to: draft.to,
      replyTo: ['r@x.org'],
      cc: [],
      bcc: ['NULL'],
      subject: draft.subject,
      html: null,
      text: 'line1\nline2',
      headers: { 'X-A': 'b' },
      attachments: draft.attachments,
      templateId: 't1',
      inReplyToId: 'e0',
      scheduledAt,
      latestStatus: 'SCHEDULED',
      campaignId: 'c1',
      contactId: 'k1',
      isMarketing: true,
      unsubUrl: 'https://u/x',
      createdAt: now,
      updatedAt: now,
      toAddresses: draft.to,
      recipientAddresses: [...draft.to, 'null'],
      source: 'CAMPAIGN',
      // Read from the attachments given: 'aGk=' is the two bytes of "hi".
      attachmentList: [{ filename: 'a.txt', contentType: 'text/plain', size: 2 }],
    });
    expect(row.emailEvents).toEqual([
      expect.objectContaining({ status: 'SCHEDULED', data: { scheduledAt: scheduledAt.toISOString() }, createdAt: now }),
    ]);
  });

  it('stores a draft that leaves out what it may: empty lists, no key, a raw message, Name <addr> recipients', async () => {
    const now = new Date('2026-03-01T10:00:00.456Z');
    const raw = Buffer.from('Subject: hi\r\n\r\nbody \u00ff');
    const draft: EmailDraft = {
      teamId,
      domainId: null,
      region: 'us-east-1',
      source: 'SMTP',
      from: 'a@x.org',
      to: ['Bob <Bob@X.org>'],
      subject: 's',
      rawMessage: raw,
    };
    const [p] = prepareEmails([draft], now);
    await insertEmailRows(prismaExecutor(db), [p], now);
    const row = await db.email.findUniqueOrThrow({ where: { id: p.created.id } });
    expect(row).toMatchObject({ apiKeyId: null, replyTo: [], cc: [], bcc: [], html: null, text: null, headers: null, isMarketing: false });
    expect(row).toMatchObject({ latestStatus: 'QUEUED', toAddresses: ['bob@x.org'], searchText: 's\nbob <bob@x.org>', createdAt: now });
    expect(row.recipientAddresses).toEqual(['bob@x.org']);
    expect(Buffer.from(row.rawMessage!)).toEqual(raw);
    expect(row).toMatchObject({ source: 'SMTP', attachmentList: null });
  });

  it('keeps every address given for the address page: to, cc, bcc and the suppressed ones not sent to, once each', async () => {
    const now = new Date();
    const draft: EmailDraft = {
      teamId,
      domainId: null,
      region: 'us-east-1',
      source: 'SMTP',
      from: 'a@x.org',
      to: ['Ada <ADA@x.org>'],
      cc: ['cy@x.org', 'ada@x.org'],
      bcc: ['Dee <dee@x.org>'],
      subject: 's',
      skippedRecipients: [{ email: 'Eve <Eve@X.org>', type: 'to', status: 'SUPPRESSED', reason: 'COMPLAINT' }],
    };
    const [p] = prepareEmails([draft], now);
    await insertEmailRows(prismaExecutor(db), [p], now);
    const row = await db.email.findUniqueOrThrow({ where: { id: p.created.id } });
    expect(row.toAddresses).toEqual(['ada@x.org']);
    expect(row.recipientAddresses).toEqual(['ada@x.org', 'cy@x.org', 'dee@x.org', 'eve@x.org']);
  });

  it('writes nothing when one row is refused', async () => {
    const now = new Date();
    const ok: EmailDraft = {
      teamId,
      domainId: null,
      region: 'us-east-1',
      source: 'API',
      from: 'a@x.org',
      to: ['b@x.org'],
      subject: 'ok-row',
    };
    const bad: EmailDraft = { ...ok, subject: 'bad-row', domainId: 999999 };
    await expect(insertEmailRows(prismaExecutor(db), prepareEmails([ok, bad], now), now)).rejects.toThrow();
    expect(await db.email.count({ where: { subject: { in: ['ok-row', 'bad-row'] } } })).toBe(0);
  });
});
