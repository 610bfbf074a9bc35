import { createServer } from 'node:http';
import request from 'supertest';
import { createPublicKey } from 'node:crypto';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { createDomain, insertDomain } from '@mailrail/domain/domains/add-domain';
import { createIdentityPort } from '@mailrail/domain/ses-identity/choose-adapter';
import { createLogger } from '@mailrail/platform/log/logger';
import { createMetrics } from '@mailrail/platform/metrics/metrics';
import { decryptSecret } from '@mailrail/platform/crypto/secrets';
import { IdentityServiceError, type IdentityPort } from '@mailrail/domain/ses-identity/port';
import { queueNames } from '@mailrail/platform/queue/queues';
import { deleteDomain } from './domain-service';
import { startTestApi, type TestApi } from '../testing/api-harness';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ SES_IDENTITY_ADAPTER: 'local', SES_REGIONS: 'us-east-1,eu-west-1', DNS_RESOLVER: '127.0.0.1:9' });
});
afterAll(async () => {
  await api.close();
});

const post = (body: unknown, auth = api.team.auth) =>
  request(api.app)
    .post('/api/v1/domains')
    .set(auth)
    .send(body as object);
const expectError = (res: request.Response, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
};
const outbox = (domainId: number) => api.deps.db.webhookEvent.findMany({ where: { domainId }, orderBy: { createdAt: 'asc' } });

describe('POST /api/v1/domains', () => {
  it('creates an apex domain with its DKIM key, SES identity, records and a domain.created event', async () => {
    const res = await post({ name: 'Example.com', region: 'us-east-1' });
    expect(res.status).toBe(200);
    const d = res.body;
    expect(d).toMatchObject({
      name: 'example.com',
      teamId: api.team.teamId,
      status: 'PENDING',
      region: 'us-east-1',
      clickTracking: false,
      openTracking: false,
      dkimStatus: 'NOT_STARTED',
      spfDetails: 'NOT_STARTED',
      dmarcAdded: false,
      isVerifying: false,
      subdomain: null,
      errorMessage: null,
      verificationError: null,
      lastCheckedTime: null,
    });
    expect(typeof d.id).toBe('number');
    for (const field of ['createdAt', 'updatedAt']) expect(new Date(d[field]).toISOString()).toBe(d[field]);
    expect(JSON.stringify(d)).not.toMatch(/PRIVATE|dkimPrivateKeyEnc/);

    expect(d.dnsRecords.map((r: { type: string; name: string }) => [r.type, r.name])).toEqual([
      ['MX', 'mail'],
      ['TXT', 'mailrail._domainkey'],
      ['TXT', 'mail'],
      ['TXT', '_dmarc'],
    ]);
    const [mx, dkim, spf, dmarc] = d.dnsRecords;
    expect(mx).toEqual({
      type: 'MX',
      name: 'mail',
      fullName: 'mail.example.com',
      zone: 'example.com',
      purpose: 'MAIL_FROM',
      value: 'feedback-smtp.us-east-1.amazonses.com',
      ttl: 'Auto',
      priority: '10',
      status: 'NOT_STARTED',
    });
    expect(dkim.value).toBe(`p=${d.publicKey}`);
    expect(dkim.status).toBe('NOT_STARTED');
    // RSA 2048: the value is longer than one DNS string, so it comes in 255-character pieces too.
    expect(dkim.value.length).toBeGreaterThan(255);
    expect(dkim.valueChunks.join('')).toBe(dkim.value);
    expect(dkim.valueChunks.map((c: string) => c.length)).toEqual([255, dkim.value.length - 255]);
    expect(spf).toMatchObject({
      value: 'v=spf1 include:amazonses.com ~all',
      status: 'NOT_STARTED',
      valueChunks: ['v=spf1 include:amazonses.com ~all'],
    });
    expect(dmarc).toMatchObject({ value: 'v=DMARC1; p=none;', status: 'NOT_STARTED', recommended: true });

    const row = await api.deps.db.domain.findUniqueOrThrow({ where: { id: d.id } });
    const pem = decryptSecret(api.config.SECRET, row.dkimPrivateKeyEnc!);
    const pub = createPublicKey(pem);
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(pub.export({ type: 'spki', format: 'der' }).toString('base64')).toBe(d.publicKey);
    expect(row.nextCheckAt).not.toBeNull();

    const identity = await api.deps.db.localSesIdentity.findUniqueOrThrow({ where: { identity: 'example.com' } });
    expect(identity).toMatchObject({
      region: 'us-east-1',
      dkimSelector: 'mailrail',
      dkimPublicKey: d.publicKey,
      mailFromDomain: 'mail.example.com',
    });

    const events = await outbox(d.id);
    expect(events.map((e) => e.type)).toEqual(['domain.created']);
    expect(events[0]).toMatchObject({ teamId: api.team.teamId, dispatchedAt: null });
    expect((events[0].data as { name: string; dnsRecords: unknown[] }).name).toBe('example.com');
    expect(JSON.stringify(events[0].data)).not.toMatch(/PRIVATE|dkimPrivateKeyEnc/);
  });

  it('a domain added before the mailrail selector keeps its own (usesend) in its record and its answer', async () => {
    const old = await insertDomain(api.deps.db, api.config.SECRET, {
      teamId: api.team.teamId,
      name: 'before.example.org',
      region: 'us-east-1',
      dkimSelector: 'usesend',
    });
    const res = await request(api.app).get(`/api/v1/domains/${old.id}`).set(api.team.auth).expect(200);
    expect(res.body.dkimSelector).toBe('usesend');
    expect(res.body.dnsRecords[1]).toMatchObject({
      purpose: 'DKIM',
      name: 'usesend._domainkey',
      fullName: 'usesend._domainkey.before.example.org',
    });
  });

  it('names the records of a subdomain relative to the registrable domain', async () => {
    const res = await post({ name: 'news.example.co.uk', region: 'eu-west-1', clickTracking: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'news.example.co.uk',
      subdomain: 'news',
      region: 'eu-west-1',
      clickTracking: true,
      openTracking: false,
    });
    expect(res.body.dnsRecords.map((r: { name: string }) => r.name)).toEqual([
      'mail.news',
      'mailrail._domainkey.news',
      'mail.news',
      '_dmarc',
    ]);
    // Each record names its zone, its whole name and what it is for.
    expect(res.body.dnsRecords.map((r: { zone: string; fullName: string; purpose: string }) => [r.purpose, r.fullName, r.zone])).toEqual([
      ['MAIL_FROM', 'mail.news.example.co.uk', 'example.co.uk'],
      ['DKIM', 'mailrail._domainkey.news.example.co.uk', 'example.co.uk'],
      ['SPF', 'mail.news.example.co.uk', 'example.co.uk'],
      ['DMARC', '_dmarc.example.co.uk', 'example.co.uk'],
    ]);
    expect(res.body.dnsRecords[0].value).toBe('feedback-smtp.eu-west-1.amazonses.com');
    const identity = await api.deps.db.localSesIdentity.findUniqueOrThrow({ where: { identity: 'news.example.co.uk' } });
    expect(identity.mailFromDomain).toBe('mail.news.example.co.uk');
  });

  it('uses AWS_REGION when the region is left out', async () => {
    const res = await post({ name: 'default-region.example.org' });
    expect(res.status).toBe(200);
    expect(res.body.region).toBe('us-east-1');
  });

  it.each([
    ['localhost'],
    ['com'],
    ['co.uk'],
    ['-bad-.com'],
    ['1.2.3.4'],
    ['under_score.com'],
    ['exa mple.com'],
    ['foo.local'],
    [`${'a'.repeat(64)}.com`],
    [`${Array.from({ length: 60 }, () => 'abcd').join('.')}.com`],
    [''],
  ])('refuses the name %j with 400 and writes nothing', async (name) => {
    const before = await api.deps.db.domain.count();
    const res = await post({ name, region: 'us-east-1' });
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.error.issues[0].path).toEqual(['name']);
    expect(await api.deps.db.domain.count()).toBe(before);
  });

  it('refuses an unknown region and wrongly typed fields with 400', async () => {
    const res = await post({ name: 'region.example.com', region: 'ap-south-1' });
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.error.issues[0].path).toEqual(['region']);
    expect(res.body.error.message).toMatch(/us-east-1, eu-west-1/);
    expectError(await post({ name: 'region.example.com', region: 'nowhere' }), 400, 'BAD_REQUEST');
    expectError(await post({ name: 'types.example.com', openTracking: 'yes' }), 400, 'BAD_REQUEST');
    expectError(await post({ name: 42 }), 400, 'BAD_REQUEST');
    expectError(await post({}), 400, 'BAD_REQUEST');
    expect(await api.deps.db.domain.count({ where: { name: { in: ['region.example.com', 'types.example.com'] } } })).toBe(0);
  });

  it('answers 409 NOT_UNIQUE for a name the team already has, in any case', async () => {
    expect((await post({ name: 'dupe.example.com' })).status).toBe(200);
    expectError(await post({ name: 'dupe.example.com' }), 409, 'NOT_UNIQUE');
    expectError(await post({ name: 'DUPE.example.com' }), 409, 'NOT_UNIQUE');
  });

  it('keeps exactly one row when the same name is created concurrently', async () => {
    const results = await Promise.all([
      post({ name: 'race.example.com' }),
      post({ name: 'race.example.com' }),
      post({ name: 'race.example.com' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect(await api.deps.db.domain.count({ where: { name: 'race.example.com' } })).toBe(1);
    expect(await api.deps.db.localSesIdentity.count({ where: { identity: 'race.example.com' } })).toBe(1);
  });

  it('does not let a key bound to a domain add domains', async () => {
    const a = await api.addDomain(api.team.teamId, 'bound-adder.example.com');
    const key = await api.newKey(api.team.teamId, { domainId: a.id });
    expectError(await post({ name: 'sneaky.example.com' }, { Authorization: `Bearer ${key}` }), 403, 'FORBIDDEN');
  });
});

describe('one name in two teams', () => {
  it('lets another team add a name that exists (200, no hint that it exists); both share one SES identity', async () => {
    const teamA = await api.newTeam('Owner');
    const teamB = await api.newTeam('Other');
    const a = await post({ name: 'both.example.com' }, teamA.auth);
    const b = await post({ name: 'BOTH.example.com' }, teamB.auth);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toMatchObject({ name: 'both.example.com', teamId: teamB.teamId, status: 'PENDING', publicKey: a.body.publicKey });
    // B's records: A's (the identity's) plus B's own ownership record; A's stay the usual four.
    expect(a.body.dnsRecords.map((r: { name: string }) => r.name)).toEqual([
      'mail.both',
      'mailrail._domainkey.both',
      'mail.both',
      '_dmarc',
    ]);
    expect(b.body.dnsRecords.slice(0, 4)).toEqual(a.body.dnsRecords);
    const ownership = b.body.dnsRecords.at(-1);
    expect(ownership).toMatchObject({
      type: 'TXT',
      name: '_mailrail-verification.both',
      status: 'PENDING',
      value: expect.stringMatching(/^mailrail-verification=[0-9a-f]{32}$/),
    });
    expect(await api.deps.db.localSesIdentity.count({ where: { identity: 'both.example.com' } })).toBe(1);
    const identity = await api.deps.db.localSesIdentity.findUniqueOrThrow({ where: { identity: 'both.example.com' } });
    expect(identity.dkimPublicKey).toBe(a.body.publicKey);
  });

  it('keeps one row per team when teams add the same name concurrently, and one SES identity', async () => {
    const teams = await Promise.all([api.newTeam('R1'), api.newTeam('R2'), api.newTeam('R3')]);
    const results = await Promise.all(teams.map((t) => post({ name: 'race-teams.example.com' }, t.auth)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(results.map((r) => r.body.publicKey)).size).toBe(1);
    const rows = await api.deps.db.domain.findMany({ where: { name: 'race-teams.example.com' }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.ownershipToken === null)).toEqual([true, false, false]);
    const identity = await api.deps.db.localSesIdentity.findUniqueOrThrow({ where: { identity: 'race-teams.example.com' } });
    expect(identity.dkimPublicKey).toBe(rows[0].publicKey);
  });

  it('deletes the SES identity only with the last team that uses it', async () => {
    const teamA = await api.newTeam('First');
    const teamB = await api.newTeam('Second');
    const a = (await post({ name: 'keep.example.com' }, teamA.auth)).body.id;
    const b = (await post({ name: 'keep.example.com' }, teamB.auth)).body.id;
    expect((await request(api.app).delete(`/api/v1/domains/${a}`).set(teamA.auth)).status).toBe(200);
    expect(await api.deps.db.localSesIdentity.count({ where: { identity: 'keep.example.com' } })).toBe(1);
    expect((await request(api.app).get(`/api/v1/domains/${b}`).set(teamB.auth)).status).toBe(200);
    expect((await request(api.app).delete(`/api/v1/domains/${b}`).set(teamB.auth)).status).toBe(200);
    expect(await api.deps.db.localSesIdentity.count({ where: { identity: 'keep.example.com' } })).toBe(0);
  });
});

describe('DKIM key generation', () => {
  it('makes the keys off the event loop: never the synchronous call, and /health answers while 5 domains are added', async () => {
    // The module object itself (not an import's namespace copy), so the spy sees the API's calls.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const crypto = require('node:crypto') as typeof import('node:crypto');
    const sync = jest.spyOn(crypto, 'generateKeyPairSync');
    const server = createServer(api.app).listen(0);
    try {
      expect((await post({ name: 'keys0.example.com' })).status).toBe(200);
      let done = false;
      const adds = Promise.all([1, 2, 3, 4, 5].map((i) => post({ name: `keys${i}.example.com` }))).finally(() => (done = true));
      // One synchronous RSA 2048 key holds the loop for 0.1-0.3 s. Made with the asynchronous call
      // (libuv's threads), the loop stays free: probes are answered while the keys are made. How
      // fast they are answered is this machine's speed, not asserted.
      let answeredDuringAdds = 0;
      while (!done) {
        expect((await request(server).get('/health')).status).toBe(200);
        if (!done) answeredDuringAdds++;
        await new Promise((r) => setTimeout(r, 5));
      }
      const statuses = (await adds).map((r) => r.status);
      expect(sync).not.toHaveBeenCalled();
      expect(answeredDuringAdds).toBeGreaterThan(0);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
    } finally {
      server.close();
      sync.mockRestore();
    }
  });
});

describe('reading, updating and deleting domains', () => {
  let team: Awaited<ReturnType<TestApi['newTeam']>>;
  let a: number;
  let b: number;
  let keyA: { Authorization: string };
  beforeAll(async () => {
    team = await api.newTeam('Scoped');
    a = (await post({ name: 'a.scoped.com' }, team.auth)).body.id;
    b = (await post({ name: 'b.scoped.com' }, team.auth)).body.id;
    keyA = { Authorization: `Bearer ${await api.newKey(team.teamId, { domainId: a })}` };
  });

  it('lists the team domains newest first, and only its own domain for a bound key', async () => {
    const all = await request(api.app).get('/api/v1/domains').set(team.auth);
    expect(all.status).toBe(200);
    expect(all.body.map((d: { id: number }) => d.id)).toEqual([b, a]);
    expect(all.body[0].dnsRecords).toHaveLength(4);
    const bound = await request(api.app).get('/api/v1/domains').set(keyA);
    expect(bound.body.map((d: { id: number }) => d.id)).toEqual([a]);
  });

  it('gets one domain with its records', async () => {
    const res = await request(api.app).get(`/api/v1/domains/${a}`).set(keyA);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: a, name: 'a.scoped.com' });
    expect(res.body.dnsRecords[1].name).toBe('mailrail._domainkey.a');
  });

  it('hides domain B from a key bound to domain A on every route', async () => {
    for (const call of [
      request(api.app).get(`/api/v1/domains/${b}`).set(keyA),
      request(api.app).put(`/api/v1/domains/${b}/verify`).set(keyA),
      request(api.app).patch(`/api/v1/domains/${b}`).set(keyA).send({ clickTracking: true }),
      request(api.app).delete(`/api/v1/domains/${b}`).set(keyA),
    ]) {
      const res = await call;
      expectError(res, 404, 'NOT_FOUND');
      expect(res.body.error.message).toBe('Domain not found');
    }
    const row = await api.deps.db.domain.findUniqueOrThrow({ where: { id: b } });
    expect(row).toMatchObject({ clickTracking: false, isVerifying: false });
  });

  it('hides one team domains from another team on every route', async () => {
    const other = await api.newTeam('Nosy');
    for (const call of [
      request(api.app).get(`/api/v1/domains/${a}`).set(other.auth),
      request(api.app).put(`/api/v1/domains/${a}/verify`).set(other.auth),
      request(api.app).patch(`/api/v1/domains/${a}`).set(other.auth).send({ openTracking: true }),
      request(api.app).delete(`/api/v1/domains/${a}`).set(other.auth),
    ])
      expectError(await call, 404, 'NOT_FOUND');
    expect((await request(api.app).get('/api/v1/domains').set(other.auth)).body).toEqual([]);
    expect(await api.deps.db.domain.count({ where: { id: a } })).toBe(1);
  });

  it('answers malformed ids with 400 and impossible ones with 404', async () => {
    expectError(await request(api.app).get('/api/v1/domains/abc').set(team.auth), 400, 'BAD_REQUEST');
    expectError(await request(api.app).get('/api/v1/domains/1.5').set(team.auth), 400, 'BAD_REQUEST');
    expectError(await request(api.app).delete('/api/v1/domains/-1').set(team.auth), 400, 'BAD_REQUEST');
    expectError(await request(api.app).get('/api/v1/domains/0').set(team.auth), 404, 'NOT_FOUND');
    expectError(await request(api.app).get('/api/v1/domains/99999999999').set(team.auth), 404, 'NOT_FOUND');
    expectError(await request(api.app).put('/api/v1/domains/999999/verify').set(team.auth), 404, 'NOT_FOUND');
  });

  it('sets the tracking flags with PATCH and records domain.updated', async () => {
    const res = await request(api.app).patch(`/api/v1/domains/${a}`).set(keyA).send({ clickTracking: true, openTracking: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: a, clickTracking: true, openTracking: true });
    const again = await request(api.app).patch(`/api/v1/domains/${a}`).set(keyA).send({ openTracking: false });
    expect(again.body).toMatchObject({ clickTracking: true, openTracking: false });
    expectError(await request(api.app).patch(`/api/v1/domains/${a}`).set(keyA).send({ clickTracking: 'on' }), 400, 'BAD_REQUEST');
    const types = (await outbox(a)).map((e) => e.type);
    expect(types).toEqual(['domain.created', 'domain.updated', 'domain.updated']);
  });

  it('starts a verification: isVerifying, due now, and one job on the domains queue', async () => {
    const res = await request(api.app).put(`/api/v1/domains/${a}/verify`).set(keyA);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Domain verification started' });
    await request(api.app).put(`/api/v1/domains/${a}/verify`).set(keyA);
    const row = await api.deps.db.domain.findUniqueOrThrow({ where: { id: a } });
    expect(row.isVerifying).toBe(true);
    expect(row.nextCheckAt!.getTime()).toBeLessThanOrEqual(Date.now());
    const jobs = await api.deps.queues.get(queueNames.domains).getJobs(['waiting', 'delayed', 'active']);
    const mine = jobs.filter((j) => j.data.domainId === a);
    expect(mine).toHaveLength(1);
    expect(mine[0].name).toBe('verify-domain');
  });

  it('deletes a domain with its SES identity, its bound keys and a domain.deleted event', async () => {
    const res = await request(api.app).delete(`/api/v1/domains/${a}`).set(team.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: a, success: true, message: 'Domain deleted successfully' });
    expect(await api.deps.db.domain.count({ where: { id: a } })).toBe(0);
    expect(await api.deps.db.localSesIdentity.count({ where: { identity: 'a.scoped.com' } })).toBe(0);
    expect(await api.deps.db.localSesIdentity.count({ where: { identity: 'b.scoped.com' } })).toBe(1);
    const events = await outbox(a);
    expect(events.at(-1)!.type).toBe('domain.deleted');
    expect((events.at(-1)!.data as { id: number }).id).toBe(a);
    // The key bound to A must not become a key for the whole team.
    expect((await api.deps.db.apiKey.findMany({ where: { teamId: team.teamId, revokedAt: { not: null } } })).length).toBe(1);
    expectError(await request(api.app).get('/api/v1/domains').set(keyA), 403, 'FORBIDDEN');
    expectError(await request(api.app).get(`/api/v1/domains/${a}`).set(team.auth), 404, 'NOT_FOUND');
    expectError(await request(api.app).delete(`/api/v1/domains/${a}`).set(team.auth), 404, 'NOT_FOUND');
  });
});

describe('when SES refuses', () => {
  // A stand-in identity port that fails the way SES can (the real adapter is tested against a
  // fake SES endpoint in packages/domain/src/ses-identity).
  const refusing = (sesErrorName: string): IdentityPort => ({
    kind: 'ses',
    createIdentity: async () => {
      throw new IdentityServiceError(`SES: refused (${sesErrorName})`, sesErrorName);
    },
    getIdentityStatus: async () => null,
    deleteIdentity: async () => {
      throw new IdentityServiceError('SES: unavailable', sesErrorName);
    },
  });

  it('writes no domain and no event when the identity cannot be created', async () => {
    const events = await api.deps.db.webhookEvent.count();
    for (const [name, status] of [
      ['BadRequestException', 400],
      ['ServiceUnavailableException', 503],
    ] as const) {
      const err = await createDomain(
        { db: api.deps.db, config: api.config, identities: refusing(name) },
        { teamId: api.team.teamId, name: 'refused.example.com' },
      ).catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err.status).toBe(status);
    }
    expect(await api.deps.db.domain.count({ where: { name: 'refused.example.com' } })).toBe(0);
    expect(await api.deps.db.webhookEvent.count()).toBe(events);
  });

  it('keeps the domain, its keys and writes no event when SES cannot delete the identity', async () => {
    const d = await api.addDomain(api.team.teamId, 'undeletable.example.com');
    const key = await api.newKey(api.team.teamId, { domainId: d.id });
    const auth = { teamId: api.team.teamId, apiKeyId: 0, permission: 'FULL' as const, domainId: null, rateLimit: 0 };
    const err = await deleteDomain(
      { ...api.deps, identities: refusing('ServiceUnavailableException'), apiKeyCache: null },
      auth,
      d.id,
    ).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(503);
    expect(await api.deps.db.domain.count({ where: { id: d.id } })).toBe(1);
    expect(await api.deps.db.apiKey.count({ where: { domainId: d.id, revokedAt: null } })).toBe(1);
    expect(await outbox(d.id)).toEqual([]);
    expect(
      (
        await request(api.app)
          .get(`/api/v1/domains/${d.id}`)
          .set({ Authorization: `Bearer ${key}` })
      ).status,
    ).toBe(200);
  });
});

describe('when Redis cannot announce the revoked keys', () => {
  it('still deletes the domain and revokes its keys, and logs the unannounced keys at error level with a metric', async () => {
    const d = await api.addDomain(api.team.teamId, 'announce.example.com');
    await api.newKey(api.team.teamId, { domainId: d.id });
    const [bound] = await api.deps.db.apiKey.findMany({ where: { domainId: d.id }, select: { clientId: true } });
    const lines: string[] = [];
    const log = createLogger('info', 'api', { write: (line: string) => void lines.push(line) });
    const metrics = createMetrics('api');
    let publishes = 0;
    const redis = Object.assign(Object.create(api.deps.redis), {
      publish: async () => {
        publishes++;
        throw new Error('Connection is closed.');
      },
    });
    const auth = { teamId: api.team.teamId, apiKeyId: 0, permission: 'FULL' as const, domainId: null, rateLimit: 0 };
    expect(
      await deleteDomain(
        { ...api.deps, identities: createIdentityPort(api.config, { db: api.deps.db }), redis, log, metrics, apiKeyCache: null },
        auth,
        d.id,
      ),
    ).toMatchObject({ id: d.id, success: true });
    expect(await api.deps.db.apiKey.count({ where: { clientId: bound.clientId, revokedAt: { not: null } } })).toBe(1);
    expect(publishes).toBe(3); // retried before giving up
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg?.includes('revoked API keys not announced'));
    expect(logged).toMatchObject({
      level: 50,
      clientIds: [bound.clientId],
      cachedForSeconds: api.config.API_KEY_CACHE_SECONDS,
      err: { message: 'Connection is closed.' },
    });
    expect((await metrics.registry.getSingleMetric('mailrail_api_key_revocations_unannounced_total')!.get()).values[0].value).toBe(1);
  });
});

describe('adding a domain on a one-connection pool', () => {
  it("writes the local SES identity in the domain's own transaction: no second connection is waited for", async () => {
    // The identity row once went through the pool while the transaction held its connection: with
    // as many concurrent adds as connections, every add waited for a connection none would free.
    const small = await startTestApi({ SES_IDENTITY_ADAPTER: 'local', DATABASE_POOL_SIZE: '1', DNS_RESOLVER: '127.0.0.1:9' });
    try {
      const res = await request(small.app).post('/api/v1/domains').set(small.team.auth).send({ name: 'one-connection.example.com' });
      expect(res.status).toBe(200);
      expect(await small.deps.db.localSesIdentity.count({ where: { identity: 'one-connection.example.com' } })).toBe(1);
    } finally {
      await small.close();
    }
  }, 60_000);
});
