// A fixed single-threaded workload, timed: how fast this machine's cores are right now. Machines
// of one kind here differ by more than the targets' margins (the API's CPU per send at 2,000/s
// read 275 µs on one 2-core AMD EPYC VM and 445 µs on another of the same kind), so a report
// names this figure beside its own and a reader can tell a slower machine from a slower build.
import { createHash } from 'node:crypto';

const PAYLOAD = {
  from: 'Shop <orders@shop.example.com>',
  to: ['customer@example.com'],
  subject: 'Your order #123456',
  html: '<p>Thanks for your order.</p>'.repeat(8),
};

function workload(): number {
  let checksum = 0;
  for (let i = 0; i < 50_000; i++) {
    const text = JSON.stringify({ ...PAYLOAD, n: i });
    const back = JSON.parse(text) as { subject: string };
    checksum += createHash('sha256')
      .update(back.subject + i)
      .digest()[0];
  }
  return checksum;
}

/** Milliseconds the workload takes, the best of `runs` (the least disturbed by other work). Lower is faster. */
export function machineSpeedMs(runs = 5): number {
  workload(); // JIT warm-up
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    workload();
    best = Math.min(best, performance.now() - t);
  }
  return Math.round(best);
}

if (require.main === module) console.log(`CPU reference: ${machineSpeedMs()} ms (best of 5; lower is faster)`);
