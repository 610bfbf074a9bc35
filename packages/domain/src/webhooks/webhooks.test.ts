import { Webhooks } from 'usesend-js';
import { useTestDatabase } from '@mailrail/testing/databases';
import { createTeam } from '../teams/api-keys';
import { emailStatusWebhookEvent, webhookEventTypes } from './events';
import { recordEmailStatusEvent } from './payloads';
import { newWebhookSecret, signWebhookBody, verifyWebhookSignature } from './signing';
import { isPublicAddress, publicOnlyLookup } from './ssrf';

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['93.184.215.14', true],
    ['2606:4700:4700::1111', true],
    ['10.0.0.1', false],
    ['172.31.255.255', false],
    ['192.168.0.1', false],
    ['127.0.0.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.251', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::a00:1', false],
    ['not an ip', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('publicOnlyLookup', () => {
  const run = (answers: string[], options: object) =>
    new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) =>
      publicOnlyLookup(async () => answers)('hooks.example.com', options, (err, address, family) => resolve({ err, address, family })),
    );

  it('passes public answers, in the shape http asks for', async () => {
    expect(await run(['93.184.215.14'], {})).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect((await run(['93.184.215.14', '2606:4700::1'], { all: true })).address).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
  });

  it('refuses when any answer is private', async () => {
    const { err } = await run(['93.184.215.14', '127.0.0.1'], { all: true });
    expect(err?.message).toMatch(/hooks\.example\.com resolves to 127\.0\.0\.1/);
  });
});

describe('signing', () => {
  it('produces what usesend-js verifies, and nothing else', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const body = JSON.stringify({ id: 'e1', type: 'email.sent', createdAt: new Date().toISOString(), data: {}, attempt: 1 });
    const ts = Date.now();
    const headers = { 'X-UseSend-Signature': signWebhookBody(secret, ts, body), 'X-UseSend-Timestamp': String(ts) };
    const sdk = new Webhooks(secret);
    expect(sdk.verify(body, { headers })).toBe(true);
    expect(sdk.verify(body.replace('e1', 'e2'), { headers })).toBe(false);
    expect(new Webhooks(newWebhookSecret()).verify(body, { headers })).toBe(false);
    const stale = ts - 10 * 60_000;
    expect(
      sdk.verify(body, { headers: { 'X-UseSend-Signature': signWebhookBody(secret, stale, body), 'X-UseSend-Timestamp': String(stale) } }),
    ).toBe(false);
    // Our own receiver-side helper agrees with the SDK.
    expect(verifyWebhookSignature(secret, { signature: headers['X-UseSend-Signature'], timestamp: String(ts) }, body)).toBe(true);
    expect(verifyWebhookSignature(secret, { signature: headers['X-UseSend-Signature'], timestamp: String(ts) }, `${body} `)).toBe(false);
  });
});

describe('event vocabulary', () => {
  it('maps every email status except SCHEDULED to an event of the vocabulary', () => {
    for (const [status, type] of Object.entries(emailStatusWebhookEvent)) {
      if (status === 'SCHEDULED') expect(type).toBeNull();
      else expect(webhookEventTypes).toContain(type);
    }
  });
});

describe('recordEmailStatusEvent', () => {
  const database = useTestDatabase();

  it('writes the email.<status> outbox row in the caller’s transaction, and nothing for SCHEDULED', async () => {
    const team = await createTeam(database.db, 't');
    const email = {
      id: 'em1',
      teamId: team.id,
      from: 'a@x.com',
      to: ['b@y.com'],
      subject: 'Hi',
      campaignId: null,
      contactId: null,
      skippedRecipients: null,
      domainId: null,
      templateId: null,
    };
    const at = new Date('2026-01-02T03:04:05.000Z');
    const id = await database.db.$transaction((tx) =>
      recordEmailStatusEvent(tx, email, 'BOUNCED', at, { bounce: { type: 'Permanent', subType: 'General' } }),
    );
    expect(await database.db.webhookEvent.findUniqueOrThrow({ where: { id: id! } })).toMatchObject({
      teamId: team.id,
      type: 'email.bounced',
      dispatchedAt: null,
      data: {
        id: 'em1',
        status: 'BOUNCED',
        to: ['b@y.com'],
        occurredAt: at.toISOString(),
        bounce: { type: 'Permanent', subType: 'General' },
      },
    });
    expect(await recordEmailStatusEvent(database.db, email, 'SCHEDULED', at)).toBeNull();
    // A rolled-back change leaves no event behind.
    await database.db
      .$transaction(async (tx) => {
        await recordEmailStatusEvent(tx, email, 'DELIVERED', at);
        throw new Error('rollback');
      })
      .catch(() => undefined);
    expect(await database.db.webhookEvent.count({ where: { type: 'email.delivered' } })).toBe(0);
  });
});
