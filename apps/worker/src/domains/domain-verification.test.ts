import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { createDnsLookup } from '@mailrail/domain/domains/dns-lookup';
import { createDomain } from '@mailrail/domain/domains/add-domain';
import { createIdentityPort } from '@mailrail/domain/ses-identity/choose-adapter';
import { createLogger } from '@mailrail/platform/log/logger';
import { createQueueFactory, queueNames, queuePrefix, type QueueFactory } from '@mailrail/platform/queue/queues';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { domainView } from '@mailrail/domain/domains/domain-view';
import {
  DNS_PROPAGATION_HOURS,
  enqueueDomainVerification,
  nextCronTime,
  propagationEndsAt,
} from '@mailrail/domain/domains/verification-schedule';
import { parseDomainName } from '@mailrail/domain/domains/domain-name';
import { splitTxtValue } from '@mailrail/domain/domains/dns-records';
import { type Config } from '@mailrail/platform/config/schema';
import { type Domain } from '@mailrail/platform/db/generated/client';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { startTestDnsServer, type TestDnsServer, type TestZoneEntry } from '@mailrail/testing/dns-server';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { periodicJobs } from '../periodic/periodic-jobs';
import { enqueueDueDomainChecks, processDomainJob, registerDomainVerification, type DomainVerificationDeps } from './domain-verification';

// Real PostgreSQL, Redis and a real DNS server (dns2 on 127.0.0.1) answering node's resolver;
// the local identity adapter stands in for SES, which cannot be reached from here.
let dnsServer: TestDnsServer;
let databaseUrl: string;
let prefix: string;
let config: Config;
let db: Db;
let redis: Redis;
let queues: QueueFactory;
let deps: DomainVerificationDeps;
let teamId: number;
let clock = new Date('2026-11-20T10:17:00Z');
/** Once DNS has had its time: DNS_PROPAGATION_HOURS after `clock`, when the domains below are added. */
const afterPropagation = () => new Date(propagationEndsAt(clock).getTime() + 60_000);
/** Runs `work` with the clock at `at`, then puts it back. */
async function at<T>(when: Date, work: () => Promise<T>): Promise<T> {
  const saved = clock;
  clock = when;
  try {
    return await work();
  } finally {
    clock = saved;
  }
}

beforeAll(async () => {
  dnsServer = await startTestDnsServer();
  databaseUrl = await createTestDatabase();
  prefix = testRedisPrefix();
  config = testConfig(databaseUrl, prefix, {
    SES_IDENTITY_ADAPTER: 'local',
    SES_REGIONS: 'us-east-1,eu-west-1',
    DNS_RESOLVER: dnsServer.address,
    DNS_TIMEOUT_MS: '300',
  });
  db = createDb(config.DATABASE_URL, 5);
  redis = createRedis(config.redis, { forWorker: true });
  queues = createQueueFactory(redis, config);
  const dns = createDnsLookup(config.DNS_RESOLVER, config.DNS_TIMEOUT_MS);
  deps = {
    db,
    sql: prismaExecutor(db),
    queues,
    dns,
    identities: createIdentityPort(config, { db, dns }),
    config,
    log: createLogger('silent', 'test'),
    now: () => clock,
  };
  teamId = (await createTeam(db, 'Verifiers')).id;
});
afterAll(async () => {
  await queues.closeAll();
  await deleteRedisPrefix(redis, prefix).catch(() => undefined);
  redis.disconnect();
  await db.$disconnect();
  await dropDatabase(databaseUrl);
  await dnsServer.close();
});

const addDomain = (name: string, region = 'us-east-1') =>
  createDomain({ db, config, identities: deps.identities, now: () => clock }, { teamId, name, region });
const verify = (domainId: number) => processDomainJob(deps, { name: 'verify-domain', data: { domainId } });
const row = (id: number) => db.domain.findUniqueOrThrow({ where: { id } });
const eventTypes = async (domainId: number) =>
  (await db.webhookEvent.findMany({ where: { domainId }, orderBy: { createdAt: 'asc' } })).map((e) => e.type);

/** The zone a customer who followed our instructions would publish, with per-name overrides. */
function correctZone(d: Domain, overrides: Record<string, TestZoneEntry | undefined> = {}): Record<string, TestZoneEntry> {
  const parsed = parseDomainName(d.name);
  const apex = parsed.ok ? parsed.apex : d.name;
  const zone: Record<string, TestZoneEntry | undefined> = {
    [`${d.dkimSelector}._domainkey.${d.name}`]: { txt: [splitTxtValue(`p=${d.publicKey}`)] },
    [`mail.${d.name}`]: {
      txt: [['v=spf1 include:amazonses.com ~all']],
      mx: [{ exchange: `feedback-smtp.${d.region}.amazonses.com`, priority: 10 }],
    },
    [`_dmarc.${apex}`]: { txt: [['v=DMARC1; p=none;']] },
    ...overrides,
  };
  return Object.fromEntries(Object.entries(zone).filter(([, v]) => v !== undefined)) as Record<string, TestZoneEntry>;
}

describe('verifying a domain', () => {
  it('moves a domain with the right records to SUCCESS and records domain.verified once', async () => {
    const d = await addDomain('good.example.com');
    await db.domain.update({ where: { id: d.id }, data: { isVerifying: true } });
    dnsServer.setZone(correctZone(d));

    expect(await verify(d.id)).toEqual({ domainId: d.id, status: 'SUCCESS' });
    const after = await row(d.id);
    expect(after).toMatchObject({
      status: 'SUCCESS',
      dkimStatus: 'SUCCESS',
      spfDetails: 'SUCCESS',
      dmarcAdded: true,
      isVerifying: false,
      hasEverVerified: true,
      errorMessage: null,
      verificationError: null,
      lastCheckedTime: clock,
    });
    // Verified domains are looked at again rarely.
    expect(after.nextCheckAt).toEqual(nextCronTime(config.DOMAIN_RECHECK_CRON, clock));
    expect(domainView(after).dnsRecords.map((r) => r.status)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS', 'SUCCESS']);
    const events = await db.webhookEvent.findMany({ where: { domainId: d.id }, orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['domain.created', 'domain.verified']);
    expect(events[1].data).toMatchObject({ id: d.id, status: 'SUCCESS' });

    // Nothing changed: no new event.
    await verify(d.id);
    expect(await eventTypes(d.id)).toEqual(['domain.created', 'domain.verified']);
  });

  it('verifies a subdomain, reading DMARC at the registrable domain', async () => {
    const d = await addDomain('news.example.co.uk', 'eu-west-1');
    dnsServer.setZone(correctZone(d));
    await verify(d.id);
    expect(await row(d.id)).toMatchObject({ status: 'SUCCESS', dmarcAdded: true });
  });

  it('moves a domain with wrong records to FAILED with a message naming each record', async () => {
    const d = await addDomain('wrong.example.com');
    const other = await addDomain('other-key.example.com');
    await db.domain.update({ where: { id: d.id }, data: { isVerifying: true } });
    dnsServer.setZone(
      correctZone(d, {
        [`mailrail._domainkey.wrong.example.com`]: { txt: [splitTxtValue(`p=${other.publicKey}`)] },
        [`mail.wrong.example.com`]: {
          txt: [['v=spf1 include:_spf.google.com ~all']],
          mx: [{ exchange: 'mx.elsewhere.net', priority: 10 }],
        },
        ['_dmarc.example.com']: undefined,
      }),
    );
    const later = afterPropagation();
    await at(later, () => verify(d.id));
    const after = await row(d.id);
    expect(after).toMatchObject({
      status: 'FAILED',
      dkimStatus: 'FAILED',
      spfDetails: 'FAILED',
      dmarcAdded: false,
      isVerifying: false,
      hasEverVerified: false,
      verificationError: 'DNS_RECORDS_INVALID',
    });
    expect(after.errorMessage).toContain(
      "DKIM TXT record at mailrail._domainkey.wrong.example.com does not contain this domain's public key",
    );
    expect(after.errorMessage).toContain('SPF TXT record at mail.wrong.example.com does not include amazonses.com');
    expect(after.errorMessage).toContain(
      'MX record at mail.wrong.example.com points to mx.elsewhere.net instead of feedback-smtp.us-east-1.amazonses.com',
    );
    // Not verified yet: checked again at the frequent cadence.
    expect(after.nextCheckAt).toEqual(nextCronTime(config.DOMAIN_CHECK_CRON, later));
    expect(await eventTypes(d.id)).toEqual(['domain.created', 'domain.updated']);
  });

  it('says "not found" for missing records, then recovers once they are published', async () => {
    const d = await addDomain('later.example.com');
    dnsServer.setZone({});
    await at(afterPropagation(), () => verify(d.id));
    const failed = await row(d.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.errorMessage).toBe(
      'DKIM TXT record at mailrail._domainkey.later.example.com not found; SPF TXT record at mail.later.example.com not found; MX record at mail.later.example.com not found',
    );
    dnsServer.setZone(correctZone(d));
    await verify(d.id);
    expect(await row(d.id)).toMatchObject({ status: 'SUCCESS', errorMessage: null });
    expect(await eventTypes(d.id)).toEqual(['domain.created', 'domain.updated', 'domain.verified']);
  });

  it(`stays PENDING, saying what is not found yet and when it is checked next, for ${DNS_PROPAGATION_HOURS} hours; then FAILED`, async () => {
    const d = await addDomain('new.example.com');
    await db.domain.update({ where: { id: d.id }, data: { isVerifying: true } });
    dnsServer.setZone({ [`${d.dkimSelector}._domainkey.new.example.com`]: { txt: [splitTxtValue(`p=${d.publicKey}`)] } });
    const hours = (h: number) => new Date(clock.getTime() + h * 3_600_000);
    for (const h of [0, 1, 24, DNS_PROPAGATION_HOURS - 1]) {
      expect(await at(hours(h), () => verify(d.id))).toEqual({ domainId: d.id, status: 'PENDING' });
      const pending = await row(d.id);
      expect(pending).toMatchObject({
        status: 'PENDING',
        verificationError: 'DNS_RECORDS_PROPAGATING',
        // The records are not FAILED either: the found DKIM one as SES has it, the others not seen yet.
        spfDetails: 'PENDING',
        errorMessage: 'SPF TXT record at mail.new.example.com not found; MX record at mail.new.example.com not found',
        // "Not seen yet" answers the request to check: the next check is hours away.
        isVerifying: false,
        nextCheckAt: nextCronTime(config.DOMAIN_CHECK_CRON, hours(h)),
      });
      expect(domainView(pending)).toMatchObject({
        propagationEndsAt: hours(DNS_PROPAGATION_HOURS).toISOString(),
        nextCheckAt: nextCronTime(config.DOMAIN_CHECK_CRON, hours(h)).toISOString(),
      });
    }
    // No status change while pending: no event either.
    expect(await eventTypes(d.id)).toEqual(['domain.created']);
    expect(await at(hours(DNS_PROPAGATION_HOURS), () => verify(d.id))).toEqual({ domainId: d.id, status: 'FAILED' });
    expect(await row(d.id)).toMatchObject({ verificationError: 'DNS_RECORDS_INVALID', isVerifying: false, spfDetails: 'FAILED' });
    expect(await eventTypes(d.id)).toEqual(['domain.created', 'domain.updated']);
  });

  it('a domain that has verified once is FAILED at once when its records go, propagation window or not', async () => {
    const d = await addDomain('once.example.com');
    dnsServer.setZone(correctZone(d));
    expect(await verify(d.id)).toEqual({ domainId: d.id, status: 'SUCCESS' });
    dnsServer.setZone({});
    expect(await verify(d.id)).toEqual({ domainId: d.id, status: 'FAILED' });
    expect(domainView(await row(d.id)).propagationEndsAt).toBeNull();
  });

  it('reads SERVFAIL as TEMPORARY_FAILURE, and keeps a verified domain verified through it', async () => {
    const d = await addDomain('flaky.example.com');
    await db.domain.update({ where: { id: d.id }, data: { isVerifying: true } });
    dnsServer.setZone(correctZone(d, { 'mailrail._domainkey.flaky.example.com': { servfail: true } }));
    await verify(d.id);
    const temp = await row(d.id);
    expect(temp).toMatchObject({
      status: 'TEMPORARY_FAILURE',
      dkimStatus: 'TEMPORARY_FAILURE',
      spfDetails: 'SUCCESS',
      isVerifying: true,
      verificationError: 'DNS_SERVER_ERROR',
    });
    expect(temp.errorMessage).toMatch(/mailrail\._domainkey\.flaky\.example\.com.*ESERVFAIL/);

    dnsServer.setZone(correctZone(d));
    await verify(d.id);
    expect((await row(d.id)).status).toBe('SUCCESS');

    dnsServer.setZone(correctZone(d, { 'mail.flaky.example.com': { servfail: true } }));
    await verify(d.id);
    const stillVerified = await row(d.id);
    expect(stillVerified).toMatchObject({ status: 'SUCCESS', spfDetails: 'TEMPORARY_FAILURE' });
    expect(stillVerified.errorMessage).toMatch(/ESERVFAIL/);
    expect(stillVerified.nextCheckAt).toEqual(nextCronTime(config.DOMAIN_CHECK_CRON, clock));
    expect(await eventTypes(d.id)).toEqual(['domain.created', 'domain.updated', 'domain.verified']);
  });

  it('reads an unreachable DNS server as TEMPORARY_FAILURE', async () => {
    const d = await addDomain('nodns.example.com');
    const dead = createDnsLookup('127.0.0.1:9', 200);
    await processDomainJob(
      { ...deps, dns: dead, identities: createIdentityPort(config, { db, dns: dead }) },
      { name: 'verify-domain', data: { domainId: d.id } },
    );
    expect(await row(d.id)).toMatchObject({ status: 'TEMPORARY_FAILURE' });
  });

  it('fails a domain whose SES identity has disappeared', async () => {
    const d = await addDomain('orphan.example.com');
    dnsServer.setZone(correctZone(d));
    await db.localSesIdentity.delete({ where: { identity: 'orphan.example.com' } });
    await verify(d.id);
    expect(await row(d.id)).toMatchObject({ status: 'FAILED', verificationError: 'IDENTITY_NOT_FOUND' });
  });

  it('skips a domain deleted before its job ran, and refuses unknown job names', async () => {
    expect(await verify(987654)).toEqual({ domainId: 987654, skipped: 'domain no longer exists' });
    await expect(processDomainJob(deps, { name: 'nope', data: {} })).rejects.toThrow(/unknown domains job/);
  });
});

describe('scheduling', () => {
  it('the sweep queues a job for each due domain, once', async () => {
    const queue = queues.get(queueNames.domains);
    await queue.obliterate({ force: true });
    const due = await addDomain('due.example.com');
    const notDue = await addDomain('notdue.example.com');
    await db.domain.updateMany({ data: { nextCheckAt: new Date(clock.getTime() + 24 * 3600_000) } });
    await db.domain.update({ where: { id: due.id }, data: { nextCheckAt: new Date(clock.getTime() - 1000) } });

    expect(await processDomainJob(deps, { name: 'sweep-domains', data: {} })).toEqual({ queued: 1 });
    await enqueueDueDomainChecks(deps);
    await enqueueDomainVerification(queues, due.id);
    const jobs = await queue.getJobs(['waiting', 'delayed', 'active']);
    expect(jobs.map((j) => j.data.domainId)).toEqual([due.id]);
    expect(jobs.map((j) => j.data.domainId)).not.toContain(notDue.id);
  });

  it('the registered worker runs queued checks; the sweep is the registry entry on DOMAIN_CHECK_CRON, not a scheduler of its own', async () => {
    const queue = queues.get(queueNames.domains);
    await queue.obliterate({ force: true });
    const d = await addDomain('worker.example.com');
    dnsServer.setZone(correctZone(d));
    const running = await registerDomainVerification(deps, { connection: redis, prefix: queuePrefix(config, queueNames.domains) });
    try {
      await enqueueDomainVerification(queues, d.id);
      const deadline = Date.now() + 20_000;
      while ((await row(d.id)).status !== 'SUCCESS' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect((await row(d.id)).status).toBe('SUCCESS');
      // Declared (and re-declared after a Redis loss) by the registry: periodic-jobs.test.ts.
      expect(await queue.getJobSchedulers()).toEqual([]);
      expect(periodicJobs(config).find((j) => j.name === 'domain-verification-sweep')).toMatchObject({ cron: config.DOMAIN_CHECK_CRON });
    } finally {
      await running.close();
    }
  });
});

describe('one name in two teams (one shared SES identity)', () => {
  it('does not verify team B because team A published its records; B verifies with its own ownership TXT record', async () => {
    const teamB = (await createTeam(db, 'Squatter')).id;
    const a = await addDomain('shared.example.com');
    const b = await createDomain(
      { db, config, identities: deps.identities, now: () => clock },
      { teamId: teamB, name: 'shared.example.com', region: 'us-east-1' },
    );
    // B shares A's identity: same DKIM key and selector, plus an ownership token of its own.
    expect(b).toMatchObject({
      publicKey: a.publicKey,
      dkimSelector: a.dkimSelector,
      ownershipToken: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(a.ownershipToken).toBeNull();
    const ownership = domainView(b).dnsRecords.find((r) => r.name === '_mailrail-verification.shared');
    expect(ownership).toMatchObject({ type: 'TXT', value: `mailrail-verification=${b.ownershipToken}`, status: 'PENDING' });

    // Team A (the name's real owner) publishes its records; SES verifies the shared identity.
    dnsServer.setZone(correctZone(a));
    expect(await verify(a.id)).toEqual({ domainId: a.id, status: 'SUCCESS' });
    expect(await verify(b.id)).toEqual({ domainId: b.id, status: 'PENDING' });
    expect(await row(b.id)).toMatchObject({ verificationError: 'DNS_RECORDS_PROPAGATING' });
    expect(await at(afterPropagation(), () => verify(b.id))).toEqual({ domainId: b.id, status: 'FAILED' });
    const failedB = await row(b.id);
    expect(failedB).toMatchObject({ hasEverVerified: false, verificationError: 'OWNERSHIP_RECORD_MISSING' });
    expect(failedB.errorMessage).toContain('_mailrail-verification.shared.example.com');
    expect(domainView(failedB).dnsRecords.find((r) => r.name === '_mailrail-verification.shared')?.status).toBe('FAILED');

    // Whoever controls the zone publishes B's token too: now B is proven.
    dnsServer.setZone(
      correctZone(a, { '_mailrail-verification.shared.example.com': { txt: [[`mailrail-verification=${b.ownershipToken}`]] } }),
    );
    expect(await verify(b.id)).toEqual({ domainId: b.id, status: 'SUCCESS' });
  });
});
