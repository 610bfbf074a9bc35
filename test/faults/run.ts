// npm run test:faults — fault scenarios against real API and worker processes, at their CI sizes
// (`-- --full`: the full sizes, sizes.ts). Prints one result line per scenario and exits non-zero
// when any fails. `-- --kills` runs only the scenarios that SIGKILL workers, `-- --no-kills` the
// others: CI runs the kills beside the scale and cluster tests (they count, and mostly wait on
// leases and in-doubt windows), the others alone. `npm run test:faults -- 5 2` runs a subset
// (`-- fuzz` is scenario 8, `-- rate` scenario 9, `-- in-doubt` scenario 10, `-- noisy` scenario 11, `-- noisy-worker` scenario 12, `-- noisy-sends` scenario 13, `-- automations` scenario 14).
import { idempotencyUnderConcurrency, redisFlushMidRun, sesFaults, workerKilledMidBurst } from './send-scenarios';
import { campaignWorkerKilled, campaignWorkerKilledWithSendEvents } from './campaign-scenario';
import { crossTeamMatrix, malformedRequests } from './api-scenarios';
import { postgresConnectionsCut } from './db-scenarios';
import { pathologicalInputs } from './pathological-scenario';
import { rateSharedByThreeWorkers } from '../timing/rate-scenario';
import { noisyExportsAndSegments } from './noisy-neighbour-scenario';
import { noisyImportsAndCampaigns } from './noisy-worker-scenario';
import { noisySendsAndPreviews } from './noisy-sends-scenario';
import { automationEnrollmentWithKills } from './automation-scenario';
import { sizeName } from './sizes';
import { resultLine, type ScenarioResult } from './stack';

const scenarios: {
  n: string;
  alias?: string;
  name: string;
  run: () => Promise<ScenarioResult>;
  /** Kills worker processes and counts what reached SES: no figure of it depends on the machine's load. */
  kills?: boolean;
}[] = [
  { n: '5', name: 'idempotency-key under 50 concurrent requests', run: idempotencyUnderConcurrency },
  { n: '2', name: 'redis keys flushed mid-run', run: redisFlushMidRun },
  { n: '3', name: 'ses throttling and timeouts', run: sesFaults },
  { n: '4', name: 'postgres connections cut mid-batch', run: postgresConnectionsCut },
  { n: '6', name: 'malformed requests on every route', run: malformedRequests },
  { n: '7', name: 'every route with another team ids', run: crossTeamMatrix },
  { n: '8', alias: 'fuzz', name: 'pathological inputs on every route', run: pathologicalInputs },
  { n: '9', alias: 'rate', name: 'SES rate shared by three workers and both lanes', run: rateSharedByThreeWorkers },
  { n: '11', alias: 'noisy', name: 'noisy neighbour on exports and segment previews', run: noisyExportsAndSegments },
  { n: '12', alias: 'noisy-worker', name: 'noisy neighbour on imports and campaign preparation', run: noisyImportsAndCampaigns },
  { n: '13', alias: 'noisy-sends', name: 'noisy neighbour on the send queue and campaign previews', run: noisySendsAndPreviews },
  { n: '1', name: 'worker SIGKILL x5 during a campaign', run: campaignWorkerKilled, kills: true },
  { n: "1'", name: 'worker SIGKILL x5 during a burst', run: workerKilledMidBurst, kills: true },
  {
    n: '10',
    alias: 'in-doubt',
    name: 'worker SIGKILL x5 during a campaign with SES Send events',
    run: campaignWorkerKilledWithSendEvents,
    kills: true,
  },
  {
    n: '14',
    alias: 'automations',
    name: 'worker SIGKILL x2 and Redis flushed during an automation enrollment',
    run: () => automationEnrollmentWithKills(),
    kills: true,
  },
];

async function main() {
  const flags = ['--full', '--kills', '--no-kills'];
  const only = process.argv.slice(2).filter((a) => !flags.includes(a));
  const kills = process.argv.includes('--kills') ? true : process.argv.includes('--no-kills') ? false : null;
  let failed = 0;
  let ran = 0;
  const started = Date.now();
  for (const s of scenarios) {
    if (only.length && !only.includes(s.n) && !(s.alias && only.includes(s.alias))) continue;
    if (kills !== null && Boolean(s.kills) !== kills) continue;
    ran++;
    const t0 = Date.now();
    let line: string;
    try {
      const r = await s.run();
      line = `${resultLine(s.n, s.name, r)} size=${sizeName} seconds=${((Date.now() - t0) / 1000).toFixed(1)}`;
      if (!r.pass) failed++;
    } catch (err) {
      failed++;
      line = `${resultLine(s.n, s.name, { pass: false, figures: `error=${JSON.stringify((err as Error).message)}` })} size=${sizeName}`;
    }
    console.log(line);
  }
  // A selection that matched nothing proves nothing.
  if (ran === 0) failed = 1;
  console.log(
    `faults: ${ran === 0 ? 'no scenario matched' : failed === 0 ? `all ${ran} passed` : `${failed} of ${ran} failed`} in ${((Date.now() - started) / 1000).toFixed(0)} s size=${sizeName}`,
  );
  process.exit(failed === 0 ? 0 : 1);
}

void main();
