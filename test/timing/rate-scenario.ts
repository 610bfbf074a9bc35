// 9. The SES rate shared by three worker processes and both lanes (issue 21, section 1). A low
// rate keeps it light on the CPU; every figure is read at the fake SES, where the rate counts, from
// the time each request reached it, stamped off the runner's thread: a stall of this process (it
// also drives the API and polls the database) would otherwise stamp the requests that arrived
// during it together, a bunch no sender made.
import { loadavg } from 'node:os';
import { busiestWindow, rateBetweenFirstAndLast } from '@mailrail/testing/rate-windows';
import { busiestSince, cpuCensus } from '../../bench/process-stats';
import { addWorkers, emailIdOf, sleep, startStack, waitFor, warmUp, type ScenarioResult, type Stack } from '../faults/stack';

const WORKERS = 3;

export async function rateSharedByThreeWorkers(): Promise<ScenarioResult> {
  const rate = Number(process.env.FAULTS_RATE ?? 20);
  const share = 0.5;
  // Eight jobs per lane and process keep the timeline full at 20/s with less CPU than the stack's 20.
  const stack = await startStack(
    's9',
    { SES_RATE_LIMIT: String(rate), SES_MARKETING_SHARE: String(share), SEND_CONCURRENCY: '8' },
    { stampSesArrivalsOffThread: true },
  );
  try {
    stack.ses.maxSendRate = rate; // the account's quota, as GetAccount tells it
    await addWorkers(stack, WORKERS, WORKERS);
    const warm = await warmUp(stack, WORKERS);
    if (!warm) return { pass: false, figures: 'warm-up emails never reached SES' };
    // The cap on campaign mail outlives the last waiting transactional request by a second or two.
    const settle = () => sleep(3000);
    await settle();
    // Who used the CPU while the rate was measured: printed when a window ran over.
    const census = cpuCensus();

    // Alone, each lane takes the whole rate (eight seconds of mail).
    const txAlone = await phase(stack, rate * 8, 0);
    await settle();
    const mkAlone = await phase(stack, 0, rate * 8);
    await settle();
    // Together, with campaign mail that outlasts the transactional mail: transactional mail gets at
    // least (1 - share) of the rate while both wait.
    const both = await phase(stack, rate * 5, rate * 10);

    const all = stack.ses.messages.filter((m) => !warm.includes(emailIdOf(m.raw) ?? '')).map((m) => m.arrivedAt);
    const busiest = busiestWindow(all);
    const maxWindow = busiest.count;
    const txAloneRate = rateBetweenFirstAndLast(txAlone.tx);
    const mkAloneRate = rateBetweenFirstAndLast(mkAlone.mk);
    const txBothRate = rateBetweenFirstAndLast(both.tx);
    const campaignOutlasted = Math.max(...both.mk) > Math.max(...both.tx);
    const lost = txAlone.lost + mkAlone.lost + both.lost;
    const pass =
      lost === 0 &&
      txAloneRate >= rate * 0.95 &&
      mkAloneRate >= rate * 0.95 &&
      campaignOutlasted &&
      txBothRate >= rate * (1 - share) &&
      maxWindow <= rate + 1;
    const f = (x: number) => x.toFixed(1);
    return {
      pass,
      figures:
        `workers=${WORKERS} rate=${rate} share=${share} transactional_alone=${f(txAloneRate)}/s campaign_alone=${f(mkAloneRate)}/s ` +
        `together_transactional=${f(txBothRate)}/s together_campaign=${f(rateBetweenFirstAndLast(both.mk.filter((t) => t <= Math.max(...both.tx))))}/s ` +
        `campaign_outlasted=${campaignOutlasted} max_in_any_1s_window=${maxWindow} lost=${lost}` +
        (maxWindow > rate + 1
          ? ` busiest_window=${describeWindow(busiest.start, txAlone, mkAlone, both)} load=${loadavg()
              .map((l) => l.toFixed(1))
              .join(',')} busiest_processes=[${busiestSince(census)}]`
          : ''),
    };
  } finally {
    await stack.close();
  }
}

/** Queues `tx` transactional and `mk` campaign emails at once; their arrival times at SES. */
async function phase(stack: Stack, tx: number, mk: number): Promise<{ tx: number[]; mk: number[]; lost: number }> {
  const [txIds, mkIds] = await Promise.all([stack.createEmails(tx), stack.createEmails(mk, { lane: 'marketing' })]);
  const ids = [...txIds, ...mkIds];
  // Count, do not parse, while the mail flows: the fake SES records arrival times in this process,
  // so the runner keeps its event loop free.
  const until = stack.ses.messages.length + ids.length;
  await waitFor(async () => stack.ses.messages.length >= until, 60_000 + ((tx + mk) / 5) * 1000, 'the phase at SES').catch(() => undefined);
  const delivered = await stack.waitUntilDelivered(ids, 1000);
  const txSet = new Set(txIds);
  const mkSet = new Set(mkIds);
  const times = { tx: [] as number[], mk: [] as number[] };
  for (const m of stack.ses.messages) {
    const id = emailIdOf(m.raw) ?? '';
    if (txSet.has(id)) times.tx.push(m.arrivedAt);
    if (mkSet.has(id)) times.mk.push(m.arrivedAt);
  }
  const counts = stack.sesCountsByEmailId();
  return { ...times, lost: delivered ? 0 : ids.filter((id) => !counts.has(id)).length };
}

type Phase = Awaited<ReturnType<typeof phase>>;

/** For a failing line: the arrivals of the busiest second, lane and ms after the one before. */
function describeWindow(start: number, ...phases: Phase[]): string {
  const arrivals = phases
    .flatMap((p) => [...p.tx.map((at) => ({ at, lane: 't' })), ...p.mk.map((at) => ({ at, lane: 'm' }))])
    .filter((a) => a.at >= start - 300 && a.at < start + 1300)
    .sort((a, b) => a.at - b.at);
  return arrivals.map((a, i) => `${a.at === start ? '[' : ''}${a.lane}${i ? a.at - arrivals[i - 1].at : 0}`).join(',');
}
