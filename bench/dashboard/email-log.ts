// Dashboard email log on a team with 1,000,000 emails (issue 18: ≤ 100 ms server time). Runs a
// real API (express on a local port, in this process) on its own fresh database; the emails are
// written with generate_series into the day partitions the worker's job makes (bench/email-seed.ts:
// indexes dropped during the load and rebuilt on every partition, then VACUUM ANALYZE), a second
// team holds 200,000 more so the indexes are shared.
// Server time is from the request's arrival at the http server to the answer's last byte handed to
// the socket, per request, sequential, keep-alive. Floors measured in the same run: GET /health
// (express and loopback, no database), GET /api/dashboard/session (the session lookup every
// dashboard request pays, plus one query) and the same page's SQL through Prisma without HTTP.
// The public list, GET /api/v1/emails (useSend's page and count, with mailrail's source and campaign
// filters), is measured on the same emails with a FULL key.
//   npx tsx bench/dashboard/email-log.ts [--emails 1000000] [--requests 200] [--keep] [--seed-only]
import http from 'node:http';
import os from 'node:os';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { emailSearchTextSql } from '@mailrail/domain/sql/email-search';
import { hashPassword } from '@mailrail/domain/users/passwords';
import { type ApiDeps } from '../../apps/api/src/deps';
import { emailLogPage, emailLogQuery } from '../../apps/api/src/dashboard/email-log/email-log';
import { writeResult } from '../report-kit';
import { startBenchApi } from '../bench-api';
import { createDayPartitions, createEmailIdPrefixFunction, withIndexesRebuilt } from '../email-seed';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const EMAILS = arg('emails', 1_000_000);
const REQUESTS = arg('requests', 200);
const OTHER_TEAM_EMAILS = Math.round(EMAILS / 5);
// Keep the database (its URL is printed) for EXPLAIN ANALYZE by hand; drop it yourself afterwards.
const KEEP = process.argv.includes('--keep');
const ONLY_SEED = process.argv.includes('--seed-only');
const DAYS = 90;

const q = (ms: number[], p: number) => {
  const s = [...ms].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const fmt = (n: number) => n.toFixed(2);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * A team's emails: 3 domains, statuses as a sending team sees them (mostly delivered, a few
 * bounces, rare complaints), subjects from a few templates with an order number, recipients drawn
 * from 200,000 customers at 50 domains, spread over DAYS days. Sources: 10 % from campaigns (four
 * campaigns, `campaignIds`, in turn), 10 % from the SMTP relay, 0.5 % sent by the service, the rest API. Ids are time-ordered as production
 * mints them (the creation time's prefix, then `idPrefix` and a counter), so each row lies in its day's partition.
 */
async function seed(deps: ApiDeps, teamId: number, domainIds: number[], count: number, idPrefix: string, campaignIds: string[]) {
  await deps.db.$executeRawUnsafe(
    `INSERT INTO "Email" (id, "teamId", "domainId", "from", "to", subject, text, "latestStatus", "createdAt", "updatedAt", "searchText", "toAddresses", source, "campaignId")
     SELECT id, "teamId", "domainId", "from", "to", subject, text, "latestStatus", "createdAt", "createdAt", ${emailSearchTextSql('s.')}, "to", -- bare and lower-case already
            source, CASE WHEN source = 'CAMPAIGN' THEN ($6::text[])[1 + (g / 10) % 4] END
     FROM (
       SELECT bench_email_id_prefix(at) || $1 || lpad(to_hex(g), 11, '0') AS id, $2::int AS "teamId", ($3::int[])[1 + g % 3] AS "domainId",
              'Shop <orders@shop.example.com>' AS "from",
              ARRAY['customer' || (g::bigint * 7919 % 200000) || '@example' || (g % 50) || '.com'] AS "to",
              (ARRAY['Your order #', 'Invoice #', 'Shipping update for #', 'Welcome aboard, #', 'Password reset #'])[1 + g % 5] || g AS subject,
              'Thanks for your order.' AS text,
              (CASE WHEN g % 1000 = 0 THEN 'COMPLAINED' WHEN g % 33 = 0 THEN 'BOUNCED' WHEN g % 20 = 0 THEN 'OPENED'
                    WHEN g % 97 = 0 THEN 'FAILED' WHEN g % 11 = 0 THEN 'SENT' ELSE 'DELIVERED' END)::"EmailStatus" AS "latestStatus",
              at AS "createdAt", g,
              (CASE WHEN g % 10 = 0 THEN 'CAMPAIGN' WHEN g % 10 = 5 THEN 'SMTP' WHEN g % 200 = 7 THEN 'SYSTEM' ELSE 'API' END)::"EmailSource" AS source
       FROM generate_series(1, $4::int) AS g,
            LATERAL (SELECT now() - make_interval(secs => ($4::int - g) * ($5::float8 * 86400 / $4::int)) AS at) t
     ) s`,
    idPrefix,
    teamId,
    domainIds,
    count,
    DAYS,
    campaignIds,
  );
}

async function main() {
  const api = await startBenchApi({ DATABASE_POOL_SIZE: '10', API_RATE_LIMIT: '0' });
  const { databaseUrl, config, deps, server, base } = api;

  // Server time of each request, by URL.
  const serverMs = new Map<string, number>();
  server.on('request', (req: http.IncomingMessage & { originalUrl?: string }, res: http.ServerResponse) => {
    const t = performance.now();
    // express (the first listener) has already started routing and rewritten req.url.
    const url = String(req.originalUrl ?? req.url);
    res.on('finish', () => serverMs.set(url, performance.now() - t));
  });

  const figures: Record<string, number> = {};
  try {
    console.log(`machine: nproc=${os.cpus().length}, ${os.cpus()[0].model}, node ${process.version}; load average at start: ${load()}`);
    const team = await createTeam(deps.db, 'bench');
    const other = await createTeam(deps.db, 'neighbour');
    const domainIds: number[] = [];
    for (const name of ['a.bench.test', 'b.bench.test', 'c.bench.test']) {
      domainIds.push((await deps.db.domain.create({ data: { teamId: team.id, name, publicKey: 'p', status: 'SUCCESS' } })).id);
    }
    const otherDomain = (
      await deps.db.domain.create({ data: { teamId: other.id, name: 'n.bench.test', publicKey: 'p', status: 'SUCCESS' } })
    ).id;

    const campaignIds: string[] = [];
    for (let i = 1; i <= 4; i++)
      campaignIds.push(
        (
          await deps.db.campaign.create({
            data: { id: `bench-campaign-${i}`, teamId: team.id, name: `Campaign ${i}`, from: 'a@a.bench.test', subject: 'S' },
          })
        ).id,
      );
    const otherCampaigns: string[] = [];
    for (let i = 1; i <= 4; i++)
      otherCampaigns.push(
        (
          await deps.db.campaign.create({
            data: { id: `bench-neighbour-campaign-${i}`, teamId: other.id, name: `N ${i}`, from: 'a@n.bench.test', subject: 'S' },
          })
        ).id,
      );

    const t0 = performance.now();
    await createDayPartitions(deps.sql, DAYS);
    await createEmailIdPrefixFunction(deps.sql);
    await withIndexesRebuilt(deps.sql, 'public', ['Email'], async () => {
      await seed(deps, team.id, domainIds, EMAILS, 'a', campaignIds);
      await seed(deps, other.id, [otherDomain, otherDomain, otherDomain], OTHER_TEAM_EMAILS, 'b', otherCampaigns);
    });
    await deps.db.$executeRawUnsafe('VACUUM ANALYZE "Email"');
    console.log(
      `seeded ${EMAILS} + ${OTHER_TEAM_EMAILS} emails in day partitions and rebuilt the indexes in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );

    if (ONLY_SEED) return;
    const user = await deps.db.user.create({ data: { email: 'bench@example.org', passwordHash: await hashPassword('bench password') } });
    await deps.db.membership.create({ data: { userId: user.id, teamId: team.id, role: 'MEMBER' } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
        const req = http.request(`${base}${path}`, { method, agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const login = await call(
      'POST',
      '/api/dashboard/auth/login',
      { Origin: config.PUBLIC_URL, 'Content-Type': 'application/json' },
      JSON.stringify({ email: 'bench@example.org', password: 'bench password' }),
    );
    if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
    const cookie = String(login.headers['set-cookie']).split(';')[0];

    /** Sequential requests to one URL after a warm-up: server-time quantiles. */
    const measure = async (path: string, headers: Record<string, string> = {}) => {
      const first = await call('GET', path, headers);
      if (first.status !== 200) throw new Error(`${path}: ${first.status} ${first.text.slice(0, 300)}`);
      for (let i = 0; i < 5; i++) await call('GET', path, headers);
      const ms: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        serverMs.delete(path);
        await call('GET', path, headers);
        // The server's 'finish' may come a turn after the client read the last byte.
        while (!serverMs.has(path)) await new Promise((r) => setImmediate(r));
        ms.push(serverMs.get(path)!);
      }
      return { p50: q(ms, 0.5), p99: q(ms, 0.99), max: q(ms, 1), body: first.text };
    };

    const health = await measure('/health');
    console.log(`floor GET /health (express + loopback): p50 ${fmt(health.p50)} ms, p99 ${fmt(health.p99)} ms`);
    const session = await measure('/api/dashboard/session', { Cookie: cookie });
    console.log(`floor GET /api/dashboard/session (session lookup + one query): p50 ${fmt(session.p50)} ms, p99 ${fmt(session.p99)} ms`);
    Object.assign(figures, {
      healthFloorP50Ms: health.p50,
      healthFloorP99Ms: health.p99,
      sessionFloorP50Ms: session.p50,
      sessionFloorP99Ms: session.p99,
    });

    const log = `/api/dashboard/teams/${team.id}/email-log`;
    const firstPage = JSON.parse((await call('GET', `${log}?limit=50`, { Cookie: cookie })).text) as { nextCursor: string };
    // A cursor 200 pages (10,000 emails) down.
    let deep = firstPage.nextCursor;
    for (let i = 0; i < 199; i++)
      deep = (JSON.parse((await call('GET', `${log}?limit=50&cursor=${deep}`, { Cookie: cookie })).text) as { nextCursor: string })
        .nextCursor;
    // A cursor 100 pages (5,000 emails) down one campaign's.
    let campaignDeep = '';
    for (let i = 0; i < 100; i++)
      campaignDeep = (
        JSON.parse(
          (
            await call('GET', `${log}?limit=50&campaignId=${campaignIds[1]}${campaignDeep ? `&cursor=${campaignDeep}` : ''}`, {
              Cookie: cookie,
            })
          ).text,
        ) as { nextCursor: string }
      ).nextCursor;
    // Values that exist in the seed: the recipient and the order number of one email.
    const g = Math.floor(EMAILS * 0.37);
    const recipient = `customer${(g * 7919) % 200000}@example${g % 50}.com`;
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
    const fiveDaysAgo = new Date(Date.now() - 5 * 86_400_000).toISOString();
    const scenarios: [string, string, string][] = [
      ['pageDefault', 'page 1, no filter', 'limit=50'],
      ['pageDeep', 'page 201 (cursor), no filter', `limit=50&cursor=${deep}`],
      ['statusCommon', 'status=DELIVERED', 'status=DELIVERED'],
      ['statusRare', 'status=COMPLAINED (0.1 %)', 'status=COMPLAINED'],
      ['statusTwo', 'status=BOUNCED&status=FAILED', 'status=BOUNCED&status=FAILED'],
      ['domain', 'one domain of three', `domainId=${domainIds[1]}`],
      ['dateRange', 'a 2-day range a week ago', `startDate=${encodeURIComponent(weekAgo)}&endDate=${encodeURIComponent(fiveDaysAgo)}`],
      ['searchRecipient', 'search one whole recipient address', `search=${encodeURIComponent(recipient)}`],
      ['searchAddressPart', 'search part of an address', `search=${encodeURIComponent(recipient.split('@')[0])}`],
      ['searchSubjectRare', 'search a rare subject (one order number)', `search=${encodeURIComponent(`#${g}`)}`],
      ['searchCommon', 'search a common word (20 % match)', 'search=invoice'],
      ['searchAndStatus', 'search a common word + status=BOUNCED', 'search=shipping&status=BOUNCED'],
      ['sourceCommon', 'source=SMTP (10 %)', 'source=SMTP'],
      ['sourceRare', 'source=SYSTEM (0.5 %)', 'source=SYSTEM'],
      ['sourceTwo', 'source=SMTP&source=SYSTEM', 'source=SMTP&source=SYSTEM'],
      ['sourceAndStatus', 'source=SMTP + status=BOUNCED', 'source=SMTP&status=BOUNCED'],
      ['campaign', 'one campaign (2.5 %)', `campaignId=${campaignIds[1]}`],
      ['campaignAndStatus', 'one campaign + status=BOUNCED', `campaignId=${campaignIds[1]}&status=BOUNCED`],
      ['campaignDeep', 'one campaign, page 101 (cursor)', `campaignId=${campaignIds[1]}&cursor=${campaignDeep}`],
    ];
    const worst = { p50: 0, p99: 0 };
    for (const [key, label, query] of scenarios) {
      const path = `${log}?${query}`;
      const r = await measure(path, { Cookie: cookie });
      const answer = JSON.parse(r.body) as { data: unknown[]; estimatedTotal?: number };
      const rows = answer.data.length;
      // The same page's SQL without HTTP, session or JSON: the database's share.
      const parsed = emailLogQuery.parse(Object.fromEntries(new URLSearchParams(query).entries()));
      const auth = { teamId: team.id, apiKeyId: null, permission: 'FULL' as const, domainId: null, rateLimit: 0 };
      const sqlMs: number[] = [];
      for (let i = 0; i < Math.min(REQUESTS, 50); i++) {
        const t = performance.now();
        await emailLogPage(deps, auth, parsed);
        sqlMs.push(performance.now() - t);
      }
      console.log(
        `${label.padEnd(44)} ${String(rows).padStart(3)} rows: server p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms | query alone p50 ${fmt(q(sqlMs, 0.5))} ms | estimate ${answer.estimatedTotal ?? '—'}`,
      );
      Object.assign(figures, { [`${key}P50Ms`]: r.p50, [`${key}P99Ms`]: r.p99, [`${key}QueryP50Ms`]: q(sqlMs, 0.5) });
      worst.p50 = Math.max(worst.p50, r.p50);
      worst.p99 = Math.max(worst.p99, r.p99);
    }
    Object.assign(figures, { worstP50Ms: worst.p50, worstP99Ms: worst.p99 });

    // GET /api/v1/emails: the public list (its page with bodies, and its count up to EMAIL_LIST_COUNT_CAP).
    const { apiKey } = await createApiKey(deps.db, { teamId: team.id, permission: 'FULL' });
    const bearer = { Authorization: `Bearer ${apiKey}` };
    const apiScenarios: [string, string, string][] = [
      ['apiPageDefault', 'GET /api/v1/emails, page 1, no filter', 'limit=50'],
      ['apiSourceCommon', 'GET /api/v1/emails?source=SMTP (10 %)', 'limit=50&source=SMTP'],
      ['apiSourceRare', 'GET /api/v1/emails?source=SYSTEM (0.5 %)', 'limit=50&source=SYSTEM'],
      ['apiSourceTwo', 'GET /api/v1/emails, source=SMTP&source=SYSTEM', 'limit=50&source=SMTP&source=SYSTEM'],
      ['apiCampaign', 'GET /api/v1/emails, one campaign (2.5 %)', `limit=50&campaignId=${campaignIds[1]}`],
      ['apiCampaignPage', 'GET /api/v1/emails, one campaign, page 20', `limit=50&page=20&campaignId=${campaignIds[1]}`],
    ];
    const apiWorst = { p50: 0, p99: 0 };
    for (const [key, label, query] of apiScenarios) {
      const r = await measure(`/api/v1/emails?${query}`, bearer);
      const answer = JSON.parse(r.body) as { data: unknown[]; count: number };
      console.log(
        `${label.padEnd(44)} ${String(answer.data.length).padStart(3)} rows: server p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms | count ${answer.count}`,
      );
      Object.assign(figures, { [`${key}P50Ms`]: r.p50, [`${key}P99Ms`]: r.p99 });
      apiWorst.p50 = Math.max(apiWorst.p50, r.p50);
      apiWorst.p99 = Math.max(apiWorst.p99, r.p99);
    }
    Object.assign(figures, { apiWorstP50Ms: apiWorst.p50, apiWorstP99Ms: apiWorst.p99 });
    console.log(
      `worst scenario: dashboard p50 ${fmt(worst.p50)} ms, p99 ${fmt(worst.p99)} ms; GET /api/v1/emails p50 ${fmt(apiWorst.p50)} ms, p99 ${fmt(apiWorst.p99)} ms; load average at end: ${load()}`,
    );
    writeResult('dashboard', figures, { emails: EMAILS, otherTeamEmails: OTHER_TEAM_EMAILS, requests: REQUESTS, days: DAYS });
  } finally {
    if (KEEP) console.log(`kept the database: ${databaseUrl}`);
    await api.stop({ keepDatabase: KEEP });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
