// The campaign engine alone, in this process, with no send worker competing for the CPU: the time
// to fix the recipients of an N-contact campaign and to turn all of them into Email rows and send
// jobs (the jobs are added to Redis; nothing consumes them). Complements run.ts, where the same
// work shares the worker process with sending.
// Run: npx tsx bench/campaigns/engine-only.ts [contacts=100000] [chunk=1000]
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { loadConfig } from '@mailrail/platform/config/load';
import { queueNames } from '@mailrail/platform/queue/queues';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { closeWorkerDeps, createWorkerDeps } from '../../apps/worker/src/deps';
import { runCampaignWindow } from '../../apps/worker/src/campaigns/run-campaign-window';
import { prepareRecipients } from '../../apps/worker/src/campaigns/prepare-recipients';

const N = Number(process.argv[2] ?? 100_000);
const CHUNK = process.argv[3] ?? '1000';

async function main() {
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    CAMPAIGN_CHUNK_SIZE: CHUNK,
  });
  const deps = createWorkerDeps(config);
  const team = await createTeam(deps.db, 'Bench');
  const domain = await insertDomain(deps.db, config.SECRET, {
    teamId: team.id,
    name: 'bench.example.com',
    region: 'us-east-1',
    dkimSelector: 'usesend',
    verified: true,
  });
  const book = await seedContactBook(deps.db, team.id, { subscribed: N }, { domain: 'people.example.net' });
  await deps.db.$executeRawUnsafe('VACUUM ANALYZE "Contact"');
  const id = await insertScheduledCampaign(deps.db, {
    teamId: team.id,
    domainId: domain.id,
    contactBookId: book.id,
    from: 'News <news@bench.example.com>',
    scheduledAt: new Date(),
    html: `<html><body><h1>Hello {{firstName,fallback=there}}</h1>${'<p>A paragraph of a typical newsletter, with a <a href="https://example.com/x">link</a>.</p>'.repeat(10)}<p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p></body></html>`,
  });
  await deps.db.campaign.update({ where: { id }, data: { status: 'RUNNING' } });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await prepareRecipients(deps, id, new Date());
  const t1 = performance.now();
  const result = await runCampaignWindow(deps, id);
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const jobs = await deps.queues.get(queueNames.send('us-east-1', 'marketing')).getJobCountByTypes('waiting', 'prioritized', 'delayed');
  console.log(
    JSON.stringify({
      contacts: N,
      chunk: Number(CHUNK),
      recipientsSeconds: +((t1 - t0) / 1000).toFixed(2),
      enqueueSeconds: +((t2 - t1) / 1000).toFixed(2),
      totalSeconds: +((t2 - t0) / 1000).toFixed(2),
      queued: result.queued,
      sendJobs: jobs,
      nodeCpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(1),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
  await deleteRedisPrefix(deps.redis, prefix).catch(() => undefined);
  await closeWorkerDeps(deps);
  await dropDatabase(databaseUrl);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
